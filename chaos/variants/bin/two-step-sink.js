#!/usr/bin/env node
// `fencer sink`'s command line, running the deliberately broken two-step-sink (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('two-step-sink', process.argv);
