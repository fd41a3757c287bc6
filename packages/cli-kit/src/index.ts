// @fencer/cli-kit: what every `fencer` command line and process shares,
// servers or not: flag parsers, the --tls-* flags, configuredCommand and its
// one-line errors, the ready line and the stop-with-parent watch. It pulls in
// no server code (no LevelDB, logger or metrics), so a worker needs only it.
export * from './cli-options.js';
export * from './command.js';
export * from './config-error.js';
export * from './process.js';
export * from './startup-error.js';
export * from './tls-config.js';
export * from './token-file.js';
