// Client-side helpers for the sink's integration tests: typed unary calls,
// failures read with remoteFailure, and stock health/reflection clients.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { DEFAULT_LIMITS, insecureAuthenticator, silentLogger, startGrpcServer, type RunningServer } from '@fencer/server-kit';
import { SERVICE_NAMES, fencing, remoteFailure, unaryCall, bearer, type SinkClient, type RemoteFailure } from '@fencer/proto';
import { sinkHandlers } from '../src/grpc/handlers.js';
import type { SinkApi } from '../src/core/sink-engine.js';
import type {
  AdvanceFenceRequest,
  AdvanceFenceResponse__Output,
  GetFenceResponse__Output,
  ReadResponse__Output,
  WriteRequest,
  WriteResponse__Output,
} from '@fencer/proto';

/**
 * Serves `api` (an engine over a hand-cranked store, or a deliberately
 * broken one) as fencing.v1.Sink on 127.0.0.1:0, without auth.
 */
export function serveSinkApi(api: SinkApi): Promise<RunningServer> {
  return startGrpcServer({
    serviceName: SERVICE_NAMES.sink,
    listen: '127.0.0.1:0',
    register: (server) => server.addService(fencing.Sink.service, sinkHandlers(api, { authenticator: insecureAuthenticator, log: silentLogger, limits: DEFAULT_LIMITS })),
    maxReceiveMessageBytes: 4 * DEFAULT_LIMITS.maxPayloadBytes,
    log: silentLogger,
  });
}

/** A sink client whose calls send `token` as bearer credentials (or nothing). */
export function sinkClient(address: string, token?: string) {
  const client = new fencing.Sink(address, grpc.credentials.createInsecure()) as SinkClient;
  const options = () => ({ metadata: token === undefined ? new grpc.Metadata() : bearer(token), timeoutMs: 10_000 });
  return {
    raw: client,
    advance: (request: AdvanceFenceRequest) => unaryCall<AdvanceFenceRequest, AdvanceFenceResponse__Output>(client, client.AdvanceFence, request, options()),
    write: (request: WriteRequest) => unaryCall<WriteRequest, WriteResponse__Output>(client, client.Write, request, options()),
    read: (resource: string, result_id: string) => unaryCall(client, client.Read, { resource, result_id }, options()) as Promise<ReadResponse__Output>,
    getFence: (resource: string) => unaryCall(client, client.GetFence, { resource }, options()) as Promise<GetFenceResponse__Output>,
    close: () => client.close(),
  };
}

export type TestSinkClient = ReturnType<typeof sinkClient>;

/** Resolves with the failure a call ended in; throws if it succeeded. */
export async function failureOf(call: Promise<unknown>): Promise<RemoteFailure> {
  try {
    await call;
  } catch (error) {
    return remoteFailure(error as grpc.ServiceError);
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** The outcome of a Write as a value: the response or the failure's reason. */
export async function writeOutcome(call: Promise<WriteResponse__Output>): Promise<{ outcome: string; fence: string }> {
  try {
    const response = await call;
    return { outcome: response.outcome, fence: response.fence };
  } catch (error) {
    const failure = remoteFailure(error as grpc.ServiceError);
    return { outcome: failure.reason || `code ${failure.code}`, fence: failure.metadata.fence ?? '' };
  }
}

/** Reads a result; undefined when RESULT_NOT_FOUND, throws on anything else. */
export async function readOrMissing(client: TestSinkClient, resource: string, resultId: string): Promise<{ token: string; payload: Buffer } | undefined> {
  try {
    const { token, payload } = await client.read(resource, resultId);
    return { token, payload };
  } catch (error) {
    const failure = remoteFailure(error as grpc.ServiceError);
    if (failure.reason === 'RESULT_NOT_FOUND') return undefined;
    throw error;
  }
}

const loaderOptions: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

/** grpc.health.v1.Health/Check for `service` ('' is the whole server). */
export async function healthStatus(address: string, service: string): Promise<string> {
  const definition = protoLoader.loadSync(healthProtoPath, loaderOptions);
  const loaded = grpc.loadPackageDefinition(definition) as any;
  const client = new loaded.grpc.health.v1.Health(address, grpc.credentials.createInsecure());
  try {
    const response = await new Promise<{ status: string }>((resolve, reject) =>
      client.Check({ service }, (error: Error | null, value: { status: string }) => (error ? reject(error) : resolve(value))),
    );
    return response.status;
  } finally {
    client.close();
  }
}

/** One server-reflection (v1) request; resolves with the first response. */
export async function reflect(address: string, request: Record<string, string>): Promise<{
  list_services_response?: { service: { name: string }[] };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  error_response?: { error_code: number };
}> {
  const require = createRequire(import.meta.url);
  const root = dirname(require.resolve('@grpc/reflection/package.json'));
  const definition = protoLoader.loadSync(join(root, 'build/proto/grpc/reflection/v1/reflection.proto'), loaderOptions);
  const loaded = grpc.loadPackageDefinition(definition) as any;
  const client = new loaded.grpc.reflection.v1.ServerReflection(address, grpc.credentials.createInsecure());
  try {
    return await new Promise((resolve, reject) => {
      const call = client.ServerReflectionInfo();
      call.on('data', (response: Awaited<ReturnType<typeof reflect>>) => {
        resolve(response);
        call.end();
      });
      call.on('error', reject);
      call.write(request);
    });
  } finally {
    client.close();
  }
}

/** The service names server reflection (v1) lists. */
export async function reflectedServices(address: string): Promise<string[]> {
  const response = await reflect(address, { list_services: '' });
  return (response.list_services_response?.service ?? []).map((s) => s.name);
}
