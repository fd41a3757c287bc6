#!/usr/bin/env node
// `fencer coordinator`'s command line, running the deliberately broken grant-forgetting-coordinator (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('grant-forgetting-coordinator', process.argv);
