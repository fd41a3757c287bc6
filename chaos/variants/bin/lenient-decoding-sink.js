#!/usr/bin/env node
// `fencer sink`'s command line, running the deliberately broken lenient-decoding-sink (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('lenient-decoding-sink', process.argv);
