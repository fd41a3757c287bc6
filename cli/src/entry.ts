// The `fencer` process's first module: a traced server must hook grpc-js
// before anything imports it (hookGrpc), so everything else is imported
// only after that decision.
import { hookGrpc, tracingAsked } from '@fencer/server-kit/tracing';

if (tracingAsked(process.argv, process.env)) await hookGrpc();
await import('./main.js');
