// @fencer/client: what every worker of the fencing protocol would otherwise
// write by hand. Typed errors first; the lease keeper and the fenced writer
// build on them.
export * from './errors.js';
export * from './retry.js';
