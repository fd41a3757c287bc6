// @fencer/toxiproxy: `fencer toxiproxy`, a fault proxy that speaks
// Toxiproxy 2.12's HTTP API and toxics as a real one behaves, so that
// toxiproxy-node-client and the chaos suite cannot tell it from the real
// one (which TOXIPROXY_URL swaps in). A product of its own: it knows
// nothing of fencing.
export { startToxiproxy, type RunningToxiproxy, type ToxiproxyOptions } from './server.js';
export { toxiproxyCommand, type ToxiproxyConfig } from './command.js';
export { TOXIPROXY_VERSION } from './api.js';
