#!/usr/bin/env node
// `fencer sink`'s command line, running the deliberately broken overwriting-sink (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('overwriting-sink', process.argv);
