// What grpcurl asks before it prints a status detail, against both services
// as real processes, in both reflection versions: it resolves the Any's type
// (file_containing_symbol), then asks all_extension_numbers_of_type for it,
// and falls back to raw bytes if either fails. A message type without
// extensions must get an empty list, as grpc-go's reflection answers;
// @grpc/reflection alone answers NOT_FOUND (src/reflection.ts). An unknown
// type is still NOT_FOUND.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reflect, startTestCluster } from '@fencer/testkit';
import type { Cluster } from '@fencer/supervisor';

let cluster: Cluster;
let stopCluster: () => Promise<void>;
beforeAll(async () => {
  ({ cluster, stop: stopCluster } = await startTestCluster('fencer-reflection-extensions-'));
}, 60_000);
afterAll(async () => stopCluster?.());

// Every type the services put in grpc-status-details-bin, and the Status itself.
const DETAIL_TYPES = ['google.rpc.Status', 'google.rpc.ErrorInfo', 'google.rpc.BadRequest'];

describe.each(['v1', 'v1alpha'] as const)('reflection %s, as grpcurl resolves a status detail', (version) => {
  it.each(['sink', 'coordinator'] as const)(
    'the %s resolves every detail type and lists its extensions',
    async (service) => {
      const address = cluster[service].ready.address;
      for (const type of DETAIL_TYPES) {
        const file = await reflect(address, { file_containing_symbol: type }, { version });
        expect(file.error_response, type).toBeUndefined();
        expect(file.file_descriptor_response?.file_descriptor_proto.length, type).toBeGreaterThan(0);
        const extensions = await reflect(address, { all_extension_numbers_of_type: type }, { version });
        expect(extensions.error_response, type).toBeUndefined();
        expect(extensions.all_extension_numbers_response, type).toEqual({ base_type_name: type, extension_number: [] });
      }
      const unknown = await reflect(address, { all_extension_numbers_of_type: 'google.rpc.NoSuchType' }, { version });
      expect(unknown.error_response?.error_code).toBe(grpc.status.NOT_FOUND);
    },
  );
});
