// @fencer/chaos: real faults between real fencer processes.
export {};
