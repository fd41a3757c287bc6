#!/usr/bin/env node
// `fencer coordinator`'s command line, running the deliberately broken grant-first-coordinator (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('grant-first-coordinator', process.argv);
