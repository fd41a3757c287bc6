// Preloaded into `fencer worker` (NODE_OPTIONS=--import, see workerClockEnv in
// src/worker-clock.ts): every call it sends carries its clock, for the
// deliberately broken worker-clock-coordinator.
import { sendWorkerClock } from '../dist/worker-clock.js';

sendWorkerClock();
