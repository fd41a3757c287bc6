// What grpcurl and every other reflection client rely on, checked with an
// independent client: starting from nothing but the server address, the
// reflection service alone yields real-named files (with their imports) for
// every type the sink puts into status details, and a protobuf library that
// is not protobufjs (@bufbuild/protobuf) decodes a real refusal with them.
import { readFileSync } from 'node:fs';
import { create, createFileRegistry, fromBinary, toJson, type DescMessage, type Registry } from '@bufbuild/protobuf';
import {
  anyUnpack,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  type FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';
import type * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reflect, sinkCalls, tempDir } from '@fencer/testkit';
import { sinkConfig, startSink, type RunningSink } from '../src/index.js';

/** Every file reflection serves for `symbol`, closed over imports by asking for each missing one by name. */
async function filesFor(address: string, symbol: string, known: Map<string, FileDescriptorProto>): Promise<void> {
  const add = (response: Awaited<ReturnType<typeof reflect>>) => {
    expect(response.error_response).toBeUndefined();
    for (const bytes of response.file_descriptor_response?.file_descriptor_proto ?? []) {
      const file = fromBinary(FileDescriptorProtoSchema, bytes);
      known.set(file.name, file);
    }
  };
  add(await reflect(address, { file_containing_symbol: symbol }));
  for (;;) {
    const missing = [...known.values()].flatMap((file) => file.dependency).find((name) => !known.has(name));
    if (missing === undefined) return;
    add(await reflect(address, { file_by_filename: missing }));
    expect(known.has(missing), `reflection serves ${missing} by name`).toBe(true);
  }
}

/** The files ordered so that each comes after the files it imports, as a FileDescriptorSet lists them. */
function importsFirst(files: Map<string, FileDescriptorProto>): FileDescriptorProto[] {
  const ordered: FileDescriptorProto[] = [];
  const visit = (name: string) => {
    const file = files.get(name);
    if (!file || ordered.includes(file)) return;
    file.dependency.forEach(visit);
    ordered.push(file);
  };
  [...files.keys()].forEach(visit);
  return ordered;
}

/** A grpc-status-details-bin trailer decoded with nothing but what reflection at `address` serves. */
async function decodeThroughReflection(address: string, details: Buffer) {
  // gRPC's convention names the trailer's type; everything else comes from the server.
  const files = new Map<string, FileDescriptorProto>();
  await filesFor(address, 'google.rpc.Status', files);
  await filesFor(address, 'fencing.v1.Sink', files);
  const registryOf = (): Registry => createFileRegistry(create(FileDescriptorSetSchema, { file: importsFirst(files) }));
  let registry = registryOf();
  const status = fromBinary(registry.getMessage('google.rpc.Status')!, details) as unknown as {
    code: number;
    message: string;
    details: { typeUrl: string; value: Uint8Array }[];
  };
  const unpacked: Record<string, any> = {};
  const json: { typeUrl: string; value: Record<string, unknown> }[] = [];
  for (const any of status.details) {
    const typeName = any.typeUrl.slice(any.typeUrl.lastIndexOf('/') + 1);
    if (!registry.getMessage(typeName)) {
      await filesFor(address, typeName, files);
      registry = registryOf();
    }
    unpacked[typeName] = anyUnpack(any as never, registry);
    const schema: DescMessage = registry.getMessage(typeName)!;
    json.push({
      typeUrl: any.typeUrl,
      value: toJson(schema, unpacked[typeName], { registry }) as Record<string, unknown>,
    });
  }
  return { status, unpacked, json, files };
}

/**
 * A refused call as grpcurl prints it: its PrintStatus layout (the code's Go
 * name, the message, then each detail after its item number and a tab) with
 * the JSON formatter. Each detail is one line of JSON with its fields' keys
 * sorted and a map's keys sorted, but a repeated message's fields in field
 * order, as grpcurl v1.8.5 built on Debian's golang-protobuf 1.5.2 printed
 * ErrorInfo and BadRequest from the real services.
 */
function asGrpcurlPrintsIt(
  code: string,
  message: string,
  details: { typeUrl: string; value: Record<string, unknown> }[],
) {
  const sorted = (value: unknown, depth = 0): unknown =>
    value && typeof value === 'object' && !Array.isArray(value) && depth < 2
      ? Object.fromEntries(
          Object.entries(value)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([k, v]) => [k, sorted(v, depth + 1)]),
        )
      : value;
  const lines = ['ERROR:', `  Code: ${code}`, `  Message: ${message}`];
  if (details.length > 0) lines.push('  Details:');
  details.forEach((detail, i) =>
    lines.push(`  ${i + 1})\t${JSON.stringify(sorted({ '@type': detail.typeUrl, ...detail.value }))}`),
  );
  return lines.join('\n');
}

describe('status details through reflection alone', () => {
  let dir: ReturnType<typeof tempDir>;
  let sink: RunningSink;
  beforeAll(async () => {
    dir = tempDir('fencer-reflection-');
    sink = await startSink(
      sinkConfig({ listen: '127.0.0.1:0', data: dir.path, insecure: true, maxPayloadBytes: 1024 }),
    );
  });
  afterAll(async () => {
    await sink?.stop();
    dir?.remove();
  });

  it('serves the real files and lets an independent library decode ErrorInfo and BadRequest', async () => {
    // A real refusal: an empty resource and a zero token (V1/V2).
    const client = sinkCalls(sink.address);
    let details: Buffer | undefined;
    try {
      await client.write({ resource: '', token: '0', result_id: 'r', payload: Buffer.from('x') });
    } catch (error) {
      details = (error as grpc.ServiceError).metadata.get('grpc-status-details-bin')[0] as Buffer;
    } finally {
      client.close();
    }
    expect(details).toBeInstanceOf(Buffer);

    const { status, unpacked, files } = await decodeThroughReflection(sink.address, details!);
    expect(status.code).toBe(3); // INVALID_ARGUMENT
    expect(Object.keys(unpacked).sort()).toEqual(['google.rpc.BadRequest', 'google.rpc.ErrorInfo']);
    expect(unpacked['google.rpc.ErrorInfo']).toMatchObject({ reason: 'INVALID_FIELD', domain: 'fencing.v1' });
    const violations = unpacked['google.rpc.BadRequest'].fieldViolations as { field: string }[];
    expect(violations.map((v) => v.field).sort()).toEqual(['resource', 'token']);
    // Real names and real imports, as the .proto files have them.
    expect([...files.keys()].sort()).toEqual([
      'fencing/v1/sink.proto',
      'google/protobuf/any.proto',
      'google/protobuf/duration.proto',
      'google/rpc/error_details.proto',
      'google/rpc/status.proto',
    ]);
    expect(files.get('google/rpc/status.proto')!.dependency).toEqual(['google/protobuf/any.proto']);
  });

  it("the README's grpcurl output of a stale write is what the sink really sends", async () => {
    const client = sinkCalls(sink.address);
    let details: Buffer | undefined;
    try {
      await client.advance({ resource: 'report-42', token: '2', grant_id: 'readme' });
      await client.write({ resource: 'report-42', token: '1', result_id: 'step-2', payload: Buffer.from('late') });
    } catch (error) {
      details = (error as grpc.ServiceError).metadata.get('grpc-status-details-bin')[0] as Buffer;
    } finally {
      client.close();
    }
    const { status, json } = await decodeThroughReflection(sink.address, details!);
    const printed = asGrpcurlPrintsIt('FailedPrecondition', status.message, json);
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(
      printed
        .split('\n')
        .map((line) => `# ${line}`)
        .join('\n'),
    );
  });
});
