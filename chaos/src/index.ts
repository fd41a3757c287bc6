// @fencer/chaos: real faults between real fencer processes.
export { startToxiproxy, type RunningToxiproxy, type ToxiproxyOptions } from './toxiproxy/server.js';
export { toxiproxyCommand, type ToxiproxyConfig } from './toxiproxy/command.js';
export { TOXIPROXY_VERSION } from './toxiproxy/api.js';
