// startGrpcServer on 127.0.0.1:0 with real clients: health follows the
// server's life (SERVING once bound, NOT_SERVING to watchers on stop), a stop
// lets calls in flight finish and refuses new ones, and a taken address is a
// StartupError.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { describe, expect, it } from 'vitest';
import { fencing, SERVICE_NAMES, unaryCall, type GetFenceRequest, type GetFenceResponse__Output } from '@fencer/proto';
import { StartupError } from '@fencer/cli-kit';
import { insecureAuthenticator } from './auth.js';
import { silentLogger } from './log.js';
import { startGrpcServer } from './server.js';

const healthPackage = grpc.loadPackageDefinition(
  protoLoader.loadSync(healthProtoPath, { keepCase: true, enums: String }),
) as unknown as {
  grpc: {
    health: {
      v1: {
        Health: new (
          address: string,
          credentials: grpc.ChannelCredentials,
        ) => grpc.Client & Record<string, grpc.MethodDefinition<unknown, unknown> & ((...args: unknown[]) => unknown)>;
      };
    };
  };
};

/** A sink service whose GetFence waits until the test releases it. */
function startWithGate() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const inHandler = new Promise<void>((resolve) => (entered = resolve));
  const started = startGrpcServer({
    serviceName: SERVICE_NAMES.sink,
    listen: '127.0.0.1:0',
    definition: fencing.Sink.service,
    handlers: {
      GetFence: (_call: unknown, callback: grpc.sendUnaryData<{ fence: string }>) => {
        entered();
        void gate.then(() => callback(null, { fence: '1' }));
      },
    },
    authenticator: insecureAuthenticator,
    maxReceiveMessageBytes: 1024 * 1024,
    log: silentLogger,
  });
  return { started, release, inHandler };
}

const sinkClient = (address: string) => new fencing.Sink(address, grpc.credentials.createInsecure());
const getFence = (client: InstanceType<typeof fencing.Sink>) =>
  unaryCall<GetFenceRequest, GetFenceResponse__Output>(
    client,
    client.GetFence,
    { resource: 'r' },
    { timeoutMs: 10_000 },
  );

describe('startGrpcServer', () => {
  it('binds port 0 and reports the real address; health is SERVING for the server and its service', async () => {
    const { started, release } = startWithGate();
    const server = await started;
    release();
    expect(server.address).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    const health = new healthPackage.grpc.health.v1.Health(server.address, grpc.credentials.createInsecure());
    for (const service of ['', SERVICE_NAMES.sink]) {
      const answer = await new Promise((resolve, reject) =>
        (health.Check as (request: unknown, callback: (error: Error | null, response: unknown) => void) => void).call(
          health,
          { service },
          (error, response) => (error ? reject(error) : resolve(response)),
        ),
      );
      expect(answer).toEqual({ status: 'SERVING' });
    }
    health.close();
    await server.stop();
  });

  it('H2: with serving false the service is NOT_SERVING until setServing(true), and back on setServing(false); the server stays SERVING', async () => {
    const server = await startGrpcServer({
      serviceName: SERVICE_NAMES.coordinator,
      listen: '127.0.0.1:0',
      definition: fencing.Coordinator.service,
      handlers: {},
      authenticator: insecureAuthenticator,
      maxReceiveMessageBytes: 1024 * 1024,
      serving: false,
      log: silentLogger,
    });
    const health = new healthPackage.grpc.health.v1.Health(server.address, grpc.credentials.createInsecure());
    const status = (service: string) =>
      new Promise((resolve, reject) =>
        (health.Check as (request: unknown, callback: (error: Error | null, response: unknown) => void) => void).call(
          health,
          { service },
          (error, response) => (error ? reject(error) : resolve((response as { status: string }).status)),
        ),
      );
    try {
      expect(await status(SERVICE_NAMES.coordinator)).toBe('NOT_SERVING');
      expect(await status('')).toBe('SERVING');
      server.setServing(true);
      expect(await status(SERVICE_NAMES.coordinator)).toBe('SERVING');
      server.setServing(false);
      expect(await status(SERVICE_NAMES.coordinator)).toBe('NOT_SERVING');
    } finally {
      health.close();
      await server.stop();
    }
  });

  it('a malformed address is a StartupError too', async () => {
    const start = startGrpcServer({
      serviceName: SERVICE_NAMES.sink,
      listen: 'nowhere',
      definition: fencing.Sink.service,
      handlers: {},
      authenticator: insecureAuthenticator,
      maxReceiveMessageBytes: 1024,
      log: silentLogger,
    });
    await expect(start).rejects.toBeInstanceOf(StartupError);
  });

  it('a taken address is a StartupError', async () => {
    const { started, release } = startWithGate();
    const first = await started;
    release();
    const second = startGrpcServer({
      serviceName: SERVICE_NAMES.sink,
      listen: first.address,
      definition: fencing.Sink.service,
      handlers: {},
      authenticator: insecureAuthenticator,
      maxReceiveMessageBytes: 1024,
      log: silentLogger,
    });
    await expect(second).rejects.toBeInstanceOf(StartupError);
    await first.stop();
  });

  it('stop lets a call in flight finish and refuses new calls', async () => {
    const { started, release, inHandler } = startWithGate();
    const server = await started;
    const client = sinkClient(server.address);
    const inFlight = getFence(client);
    await inHandler;
    const stopped = server.stop(10_000);
    const late = sinkClient(server.address);
    await expect(unaryCall(late, late.GetFence, { resource: 'r' }, { timeoutMs: 5_000 })).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });
    release();
    await expect(inFlight).resolves.toEqual({ fence: '1' });
    await stopped;
    client.close();
    late.close();
  });

  it('stop tells health watchers NOT_SERVING and ends their streams cleanly instead of waiting them out', async () => {
    const { started, release } = startWithGate();
    release();
    const server = await started;
    const health = new healthPackage.grpc.health.v1.Health(server.address, grpc.credentials.createInsecure());
    const watch = (health.Watch as (request: unknown) => grpc.ClientReadableStream<{ status: string }>).call(health, {
      service: SERVICE_NAMES.sink,
    });
    const seen: string[] = [];
    const ended = new Promise<grpc.StatusObject>((resolve) => watch.on('status', resolve));
    watch.on('error', () => {}); // the status event carries the outcome
    await new Promise<void>((resolve) => watch.on('data', ({ status }) => (seen.push(status), resolve())));
    // Left open, the watch would hold the stop for the whole grace and then be CANCELLED.
    await server.stop(2_000);
    expect((await ended).code).toBe(grpc.status.OK);
    expect(seen).toEqual(['SERVING', 'NOT_SERVING']);
    health.close();
  });
});
