// Server start-up shared by both services: the protocol service plus the
// standard health and reflection services, bound to one address (port 0
// picks a free port, reported back), and a graceful stop.
import * as grpc from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import * as protoLoader from '@grpc/proto-loader';
import { HealthImplementation, protoPath as healthProtoPath } from 'grpc-health-check';
import { LOADER_OPTIONS, errorDetailsDefinition, packageDefinition } from '@fencer/proto';
import { splitHostPort } from './cli-options.js';
import type { Logger } from './log.js';
import { StartupError } from './startup-error.js';

export { StartupError };

const HEALTH_SERVICE = 'grpc.health.v1.Health';


export interface ServerSpec {
  /** Fully qualified service name, e.g. fencing.v1.Sink (health reports it). */
  readonly serviceName: string;
  readonly listen: string;
  /** Adds the protocol service's handlers to the server. */
  readonly register: (server: grpc.Server) => void;
  /** Must stay well above the payload limit (V2), so oversize payloads get INVALID_ARGUMENT. */
  readonly maxReceiveMessageBytes: number;
  readonly log: Logger;
}

export interface RunningServer {
  /** HOST:PORT actually bound (the real port when 0 was asked for). */
  readonly address: string;
  /** Stops taking calls, lets running ones finish for up to `graceMs`, then cancels them. */
  stop(graceMs?: number): Promise<void>;
}

export async function startGrpcServer(spec: ServerSpec): Promise<RunningServer> {
  const { host } = splitHostPort(spec.listen);
  const server = new grpc.Server({
    'grpc.max_receive_message_length': spec.maxReceiveMessageBytes,
  });
  spec.register(server);
  const health = new HealthImplementation({ '': 'NOT_SERVING', [spec.serviceName]: 'NOT_SERVING' });
  health.addToServer(server);
  // Reflect exactly what this server serves: its own service and health,
  // not the other fencing.v1 service that shares the package definition;
  // plus the google.rpc error details, so tools can decode our statuses.
  new ReflectionService(
    { ...packageDefinition, ...errorDetailsDefinition, ...protoLoader.loadSync(healthProtoPath, LOADER_OPTIONS) },
    { services: [spec.serviceName, HEALTH_SERVICE] },
  ).addToServer(server);

  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(spec.listen, grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(new StartupError(`cannot listen on ${spec.listen}: ${error.message}`)) : resolve(bound),
    ),
  );
  health.setStatus('', 'SERVING');
  health.setStatus(spec.serviceName, 'SERVING');
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  spec.log.info({ address }, 'listening');

  return {
    address,
    async stop(graceMs = 5_000) {
      health.setStatus('', 'NOT_SERVING');
      health.setStatus(spec.serviceName, 'NOT_SERVING');
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
  };
}
