// The standard services every fencer server runs beside its own: health
// and server reflection, called with stock clients built from their
// published .proto files.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';

const loaderOptions: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** grpc.health.v1.Health/Check for `service` ('' is the whole server). */
export async function healthStatus(address: string, service: string): Promise<string> {
  const definition = protoLoader.loadSync(healthProtoPath, loaderOptions);
  const loaded = grpc.loadPackageDefinition(definition) as any;
  const client = new loaded.grpc.health.v1.Health(address, grpc.credentials.createInsecure());
  try {
    const response = await new Promise<{ status: string }>((resolve, reject) =>
      client.Check({ service }, (error: Error | null, value: { status: string }) =>
        error ? reject(error) : resolve(value),
      ),
    );
    return response.status;
  } finally {
    client.close();
  }
}

/** One server-reflection (v1) request; resolves with the first response. */
export async function reflect(
  address: string,
  request: Record<string, string>,
): Promise<{
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
