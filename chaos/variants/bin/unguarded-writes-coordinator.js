#!/usr/bin/env node
// `fencer coordinator`'s command line, running the deliberately broken unguarded-writes-coordinator (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('unguarded-writes-coordinator', process.argv);
