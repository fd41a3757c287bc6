// @fencer/demo: `fencer demo`, the takeover story told across real processes.
export { demoCommand, type DemoConfig } from './command.js';
export { Narrator, type Check } from './narrator.js';
