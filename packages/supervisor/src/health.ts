// The other side of gRPC health: what a supervisor (compose, Kubernetes, a
// test) asks a fencer server to learn whether it serves.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { Command, Option } from 'commander';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { channelCredentials, unaryCall, type ClientTls } from '@fencer/proto';
import { clientTls, configuredCommand, hostPort, positiveInteger, tlsOptions, type TlsFlags } from '@fencer/cli-kit';

interface HealthClient extends grpc.Client {
  Check(
    request: { service: string },
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: (error: grpc.ServiceError | null, response?: { status: string }) => void,
  ): grpc.ClientUnaryCall;
}

let healthClient: (new (address: string, credentials: grpc.ChannelCredentials) => HealthClient) | undefined;

/**
 * grpc.health.v1.Health/Check of `service` ('' is the whole server) at
 * `address`, over TLS when `tls` is given: the status name (SERVING,
 * NOT_SERVING, SERVICE_UNKNOWN...). Rejects with the grpc-js error when the
 * server cannot be reached within `timeoutMs` (a failed TLS handshake
 * included) or answers an error (NOT_FOUND for a service it does not know).
 */
export async function healthStatus(address: string, service = '', timeoutMs = 5_000, tls?: ClientTls): Promise<string> {
  healthClient ??= (() => {
    const definition = protoLoader.loadSync(healthProtoPath, { keepCase: true, enums: String, defaults: true });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      grpc: { health: { v1: { Health: new (address: string, credentials: grpc.ChannelCredentials) => HealthClient } } };
    };
    return loaded.grpc.health.v1.Health;
  })();
  const client = new healthClient(address, channelCredentials(tls));
  try {
    return (await unaryCall(client, client.Check, { service }, { timeoutMs })).status;
  } finally {
    client.close();
  }
}

/** `fencer health ADDR`: exits 0 when the server reports SERVING, 1 (with one line saying why) otherwise. */
export function healthCommand(): Command {
  return configuredCommand(
    new Command('health')
      .description('check a fencer server over gRPC health: exit 0 when it is SERVING (for compose health checks)')
      .argument('<host:port>', 'the server to ask', hostPort),
    [
      new Option('--service <name>', 'the service to ask about; empty means the whole server').default(''),
      new Option('--timeout-ms <n>', 'how long to wait for an answer').default(5_000).argParser(positiveInteger),
      ...tlsOptions('client', 'FENCER_HEALTH'),
    ],
    (options: TlsFlags & { service: string; timeoutMs: number }) => ({ ...options, tls: clientTls(options) }),
    async (options, address: string) => {
      try {
        const status = await healthStatus(address, options.service, options.timeoutMs, options.tls);
        if (status === 'SERVING') return;
        process.stderr.write(`fencer health: ${address} is ${status}\n`);
      } catch (error) {
        process.stderr.write(
          `fencer health: ${address}: ${(error as grpc.ServiceError).details || (error as Error).message}\n`,
        );
      }
      process.exitCode = 1;
    },
  );
}
