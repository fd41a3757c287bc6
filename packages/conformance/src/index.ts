// @fencer/conformance: `fencer conformance`, the black-box checks of any
// deployment of fencing.v1, and their outputs.
export { CHECKS, RULES, runChecks, type CheckResult } from './checks.js';
export { conformanceCommand, runConformance, type ConformanceConfig } from './command.js';
export { json, junit, table } from './report.js';
export { Wire, type Deployment } from './wire.js';
