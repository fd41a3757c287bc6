#!/usr/bin/env node
// `fencer coordinator`'s command line, running the deliberately broken request-forgetting-coordinator (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('request-forgetting-coordinator', process.argv);
