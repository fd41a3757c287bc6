#!/usr/bin/env node
// `fencer coordinator`'s command line, running the deliberately broken no-request-records-coordinator (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('no-request-records-coordinator', process.argv);
