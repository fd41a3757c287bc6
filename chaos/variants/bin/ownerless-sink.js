#!/usr/bin/env node
// `fencer sink`'s command line, running the deliberately broken ownerless-sink (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('ownerless-sink', process.argv);
