#!/usr/bin/env node
// `fencer coordinator`'s command line, running the deliberately broken wrapping-coordinator (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('wrapping-coordinator', process.argv);
