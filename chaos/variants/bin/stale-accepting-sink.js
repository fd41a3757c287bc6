#!/usr/bin/env node
// `fencer sink`'s command line, running the deliberately broken stale-accepting-sink (src/variants.ts).
import { runVariant } from '../dist/index.js';

await runVariant('stale-accepting-sink', process.argv);
