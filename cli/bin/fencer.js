#!/usr/bin/env node
import '../dist/entry.js';
