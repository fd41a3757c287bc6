// The one typed loader of the fencing.v1 contract. The options below are the
// ones proto-loader-gen-types used to produce ./generated (one JSON file
// feeds both), so the generated types describe exactly what grpc-js yields:
// snake_case fields as in the .proto, uint64 as decimal strings, enums as
// their names, defaults filled in.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createFileRegistry, fromBinary, type FileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import protobuf from 'protobufjs';
import type { ProtoGrpcType as SinkProto } from './generated/sink.js';
import type { ProtoGrpcType as CoordinatorProto } from './generated/coordinator.js';

export * from './status-details.js';
export * from './unary-call.js';
export {
  MessageStream,
  pairKey,
  streamFailure,
  type MessageStreamSettings,
  type StreamFailure,
} from './message-stream-call.js';
export * from './channel-credentials.js';
export { messageSpan, endedWith } from './message-span.js';

const rawOptions = JSON.parse(readFileSync(new URL('../loader-options.json', import.meta.url), 'utf8')) as {
  keepCase: boolean;
  longs: string;
  enums: string;
  defaults: boolean;
  oneofs: boolean;
};
// Every consumer relies on uint64 as decimal strings and enums as names; a
// JSON edit to anything else would regenerate matching types but load
// numbers, so it must fail here rather than pass type-checking.
if (rawOptions.longs !== 'String' || rawOptions.enums !== 'String') {
  throw new Error('proto/loader-options.json: longs and enums must be "String"');
}

/** The exact loadSync options of the generated types (see scripts/gen-types.mjs). */
export const LOADER_OPTIONS: protoLoader.Options = Object.freeze({
  ...rawOptions,
  longs: String,
  enums: String,
  includeDirs: [fileURLToPath(new URL('..', import.meta.url))],
});

/** Both services' package definition, also what server reflection serves. */
export const packageDefinition: protoLoader.PackageDefinition = protoLoader.loadSync(
  ['fencing/v1/sink.proto', 'fencing/v1/coordinator.proto'],
  LOADER_OPTIONS,
);

/**
 * What server reflection serves: the real FileDescriptorProtos, under their
 * real names with their real imports, of fencing/v1/*.proto and of
 * google/rpc/status.proto and error_details.proto (with google/protobuf/
 * any.proto and duration.proto), built by buf (scripts/gen-types.mjs).
 * proto-loader's own descriptors name files after packages
 * (`google_rpc.proto`) and leave references no client can resolve, so
 * grpcurl could not decode our status details from them. Shaped as a
 * package definition, which is what @grpc/reflection reads.
 */
const descriptorSet = readFileSync(new URL('../src/generated/descriptor-set.binpb', import.meta.url));
export const reflectionFiles = Object.freeze({
  'fencing.v1 and google.rpc files': {
    fileDescriptorProtos: splitFileDescriptorSet(descriptorSet),
  },
}) as unknown as protoLoader.PackageDefinition; // @grpc/reflection reads only fileDescriptorProtos

/**
 * The same files as descriptors with every reference resolved
 * (@bufbuild/protobuf), for what needs the exact field numbers and types of
 * a message, such as strict decoding (V3).
 */
export const descriptors: FileRegistry = createFileRegistry(fromBinary(FileDescriptorSetSchema, descriptorSet));

/** The serialized FileDescriptorProtos of a serialized FileDescriptorSet (field 1, repeated, length-delimited). */
function splitFileDescriptorSet(set: Buffer): Buffer[] {
  const reader = protobuf.Reader.create(set);
  const files: Buffer[] = [];
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 !== 1 || (tag & 7) !== 2) throw new Error('descriptor-set.binpb is not a FileDescriptorSet');
    files.push(Buffer.from(reader.bytes()));
  }
  return files;
}

const loaded = grpc.loadPackageDefinition(packageDefinition) as unknown as SinkProto & CoordinatorProto;

/** Client constructors and service definitions of fencing.v1. */
export const fencing = {
  Sink: loaded.fencing.v1.Sink,
  Coordinator: loaded.fencing.v1.Coordinator,
} as const;

/** Fully qualified service names, as health checks and reflection know them. */
export const SERVICE_NAMES = {
  sink: 'fencing.v1.Sink',
  coordinator: 'fencing.v1.Coordinator',
} as const;

// The generated wire types: `X` is what a caller may send (uint64 as string,
// number or Long), `X__Output` what grpc-js hands over (uint64 as a decimal
// string, enums as names, every field present).
export type { SinkClient, SinkHandlers } from './generated/fencing/v1/Sink.js';
export type { CoordinatorClient, CoordinatorHandlers } from './generated/fencing/v1/Coordinator.js';
export type { AdvanceFenceRequest, AdvanceFenceRequest__Output } from './generated/fencing/v1/AdvanceFenceRequest.js';
export type {
  AdvanceFenceResponse,
  AdvanceFenceResponse__Output,
} from './generated/fencing/v1/AdvanceFenceResponse.js';
export type { WriteRequest, WriteRequest__Output } from './generated/fencing/v1/WriteRequest.js';
export type { WriteResponse, WriteResponse__Output } from './generated/fencing/v1/WriteResponse.js';
export type {
  AdvanceFenceStreamRequest,
  AdvanceFenceStreamRequest__Output,
} from './generated/fencing/v1/AdvanceFenceStreamRequest.js';
export type {
  AdvanceFenceStreamResponse,
  AdvanceFenceStreamResponse__Output,
} from './generated/fencing/v1/AdvanceFenceStreamResponse.js';
export type { WriteStreamRequest, WriteStreamRequest__Output } from './generated/fencing/v1/WriteStreamRequest.js';
export type { WriteStreamResponse, WriteStreamResponse__Output } from './generated/fencing/v1/WriteStreamResponse.js';
export type { WriteRefusal, WriteRefusal__Output } from './generated/fencing/v1/WriteRefusal.js';
export type { ReadRequest, ReadRequest__Output } from './generated/fencing/v1/ReadRequest.js';
export type { ReadResponse, ReadResponse__Output } from './generated/fencing/v1/ReadResponse.js';
export type { GetFenceRequest, GetFenceRequest__Output } from './generated/fencing/v1/GetFenceRequest.js';
export type { GetFenceResponse, GetFenceResponse__Output } from './generated/fencing/v1/GetFenceResponse.js';
export type { AcquireRequest, AcquireRequest__Output } from './generated/fencing/v1/AcquireRequest.js';
export type { AcquireResponse, AcquireResponse__Output } from './generated/fencing/v1/AcquireResponse.js';
export type { RenewRequest, RenewRequest__Output } from './generated/fencing/v1/RenewRequest.js';
export type { RenewResponse, RenewResponse__Output } from './generated/fencing/v1/RenewResponse.js';
export type { ReleaseRequest, ReleaseRequest__Output } from './generated/fencing/v1/ReleaseRequest.js';
export type { ReleaseResponse, ReleaseResponse__Output } from './generated/fencing/v1/ReleaseResponse.js';
export type { DescribeRequest, DescribeRequest__Output } from './generated/fencing/v1/DescribeRequest.js';
export type { DescribeResponse, DescribeResponse__Output } from './generated/fencing/v1/DescribeResponse.js';
export type { Lease, Lease__Output } from './generated/fencing/v1/Lease.js';
export type { LeaseStreamRequest, LeaseStreamRequest__Output } from './generated/fencing/v1/LeaseStreamRequest.js';
export type { LeaseStreamResponse, LeaseStreamResponse__Output } from './generated/fencing/v1/LeaseStreamResponse.js';
export type { ForceReleaseRequest, ForceReleaseRequest__Output } from './generated/fencing/v1/ForceReleaseRequest.js';
export type {
  ForceReleaseResponse,
  ForceReleaseResponse__Output,
} from './generated/fencing/v1/ForceReleaseResponse.js';
export type { ListResultsRequest, ListResultsRequest__Output } from './generated/fencing/v1/ListResultsRequest.js';
export type { ListResultsResponse, ListResultsResponse__Output } from './generated/fencing/v1/ListResultsResponse.js';
