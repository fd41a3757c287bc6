#!/usr/bin/env node
// `fencer coordinator`'s command line, running the deliberately broken reviving-coordinator (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('reviving-coordinator', process.argv);
