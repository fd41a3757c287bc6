// @fencer/worker: `fencer worker`, a worker process built on @fencer/client,
// and the JSON events it prints (what the demo and the chaos suite read).
export { workerCommand, type WorkerCommandConfig } from './command.js';
export { MIXES, type Mix, type MixName } from './generator.js';
export { type WorkerEvent, type CallEvent, type SendingEvent } from './events.js';
