#!/usr/bin/env node
// `fencer sink`'s command line, running the deliberately broken forgetful-sink (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('forgetful-sink', process.argv);
