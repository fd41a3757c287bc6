#!/usr/bin/env node
// `fencer coordinator`'s command line, running the deliberately broken worker-clock-coordinator (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('worker-clock-coordinator', process.argv);
