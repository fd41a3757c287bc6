#!/usr/bin/env node
// `fencer sink`'s command line, running the deliberately broken bare-errors-sink (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('bare-errors-sink', process.argv);
