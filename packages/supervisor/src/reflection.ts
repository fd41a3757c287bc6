// The other side of gRPC server reflection: what grpcurl (or a conformance
// check) asks a server to learn which services it offers, with a stock
// client built from the reflection package's own .proto files.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { channelCredentials, type ClientTls } from '@fencer/proto';

/** One server-reflection response, as proto-loader decodes it. */
export interface ReflectionResponse {
  list_services_response?: { service: { name: string }[] };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  all_extension_numbers_response?: { base_type_name: string; extension_number: number[] };
  error_response?: { error_code: number; error_message: string };
}

type ReflectionVersion = 'v1' | 'v1alpha';
type ReflectionClient = new (
  address: string,
  credentials: grpc.ChannelCredentials,
) => grpc.Client & {
  ServerReflectionInfo(options: grpc.CallOptions): grpc.ClientDuplexStream<object, ReflectionResponse>;
};
const clients = new Map<ReflectionVersion, ReflectionClient>();

function clientOf(version: ReflectionVersion): ReflectionClient {
  let client = clients.get(version);
  if (!client) {
    const require = createRequire(import.meta.url);
    const root = dirname(require.resolve('@grpc/reflection/package.json'));
    const definition = protoLoader.loadSync(join(root, `build/proto/grpc/reflection/${version}/reflection.proto`), {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      grpc: { reflection: Record<ReflectionVersion, { ServerReflection: ReflectionClient }> };
    };
    client = loaded.grpc.reflection[version].ServerReflection;
    clients.set(version, client);
  }
  return client;
}

/**
 * One server-reflection request (`v1`, or `v1alpha` as grpcurl asks first),
 * resolving with the first response; rejects with the grpc-js error
 * (UNIMPLEMENTED when the server offers no reflection of that version).
 */
export async function reflect(
  address: string,
  request: Record<string, string>,
  options: { version?: ReflectionVersion; tls?: ClientTls | undefined; timeoutMs?: number } = {},
): Promise<ReflectionResponse> {
  const Client = clientOf(options.version ?? 'v1');
  const client = new Client(address, channelCredentials(options.tls));
  try {
    return await new Promise((resolve, reject) => {
      // A deadline: grpc-js takes a wall-clock date.
      const call = client.ServerReflectionInfo({ deadline: Date.now() + (options.timeoutMs ?? 5_000) });
      call.on('data', (response: ReflectionResponse) => {
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

/** The service names server reflection lists. */
export async function reflectedServices(
  address: string,
  options: Parameters<typeof reflect>[2] = {},
): Promise<string[]> {
  const response = await reflect(address, { list_services: '' }, options);
  return (response.list_services_response?.service ?? []).map((s) => s.name);
}
