// Server reflection, which every fencer server runs beside its own service,
// called with a stock client built from its published .proto file. (Health:
// healthStatus of @fencer/supervisor.)
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const loaderOptions: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

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
