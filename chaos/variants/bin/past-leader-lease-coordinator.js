#!/usr/bin/env node
// `fencer coordinator`'s command line, running the deliberately broken past-leader-lease-coordinator (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('past-leader-lease-coordinator', process.argv);
