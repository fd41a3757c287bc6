// The echo server's process, started by the bench (spawnReady): it serves
// bench.Echo on 127.0.0.1:0, prints the ready line, and stops when its
// supervisor is gone or sends SIGTERM. A process of its own, so its CPU per
// operation is measured like the sink's and the coordinator's.
import * as grpc from '@grpc/grpc-js';
import { announceReady, whenParentGone } from '@fencer/cli-kit';
import { ECHO_SERVICE, echoHandlers } from './echo.js';

const server = new grpc.Server();
server.addService(ECHO_SERVICE, echoHandlers);
const port = await new Promise<number>((resolve, reject) =>
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
    error ? reject(error) : resolve(bound),
  ),
);
const stop = () => server.tryShutdown(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
whenParentGone(stop);
announceReady('echo', `127.0.0.1:${port}`);
