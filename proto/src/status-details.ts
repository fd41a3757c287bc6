// The rich error model on the wire: a google.rpc.Status carried in the
// `grpc-status-details-bin` trailer, holding a google.rpc.ErrorInfo (domain,
// reason, metadata) and, for invalid input, a google.rpc.BadRequest. Any
// language's stock client can decode it with the googleapis protos.
import { createRequire } from 'node:module';
import protobuf from 'protobufjs';

const require = createRequire(import.meta.url);
const googleProtos = require('google-proto-files') as { getProtoPath(...paths: string[]): string };

/** The googleapis files that define the error details, as paths below GOOGLE_PROTOS_ROOT. */
export const ERROR_DETAIL_PROTO_FILES = ['google/rpc/status.proto', 'google/rpc/error_details.proto'] as const;
/** Folder holding the googleapis .proto files (google-proto-files). */
export const GOOGLE_PROTOS_ROOT = googleProtos.getProtoPath('..');

const root = new protobuf.Root();
root.loadSync(
  ERROR_DETAIL_PROTO_FILES.map((file) => googleProtos.getProtoPath('..', file)),
  { keepCase: true },
);
const StatusType = root.lookupType('google.rpc.Status');
const ErrorInfoType = root.lookupType('google.rpc.ErrorInfo');
const BadRequestType = root.lookupType('google.rpc.BadRequest');

const TYPE_URL_PREFIX = 'type.googleapis.com/';
const ERROR_INFO_URL = TYPE_URL_PREFIX + 'google.rpc.ErrorInfo';
const BAD_REQUEST_URL = TYPE_URL_PREFIX + 'google.rpc.BadRequest';

/** The domain of every ErrorInfo fencing.v1 sends; reasons are unique within it. */
export const ERROR_DOMAIN = 'fencing.v1';

/** The `grpc-status-details-bin` metadata key grpc-js and other stacks read. */
export const STATUS_DETAILS_KEY = 'grpc-status-details-bin';

/** google.rpc.ErrorInfo. `metadata` values are strings on the wire. */
export interface ErrorInfo {
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

/** One google.rpc.BadRequest.FieldViolation. */
export interface FieldViolation {
  field: string;
  description: string;
}

/** A decoded google.rpc.Status with the details this project uses. */
export interface StatusDetails {
  code: number;
  message: string;
  errorInfo?: ErrorInfo;
  fieldViolations?: FieldViolation[];
}

/**
 * A google.rpc.Status as a plain message, details packed as Any: what
 * `grpc-status-details-bin` carries, and what WriteStream's WriteRefusal
 * (wire-identical) carries per refused message.
 */
export interface StatusMessage {
  code: number;
  message: string;
  details: { type_url: string; value: Buffer }[];
}

/** The google.rpc.Status message of `status`, ErrorInfo and BadRequest packed as Any. */
export function statusMessage(status: StatusDetails): StatusMessage {
  const details: StatusMessage['details'] = [];
  if (status.errorInfo) {
    details.push({
      type_url: ERROR_INFO_URL,
      value: Buffer.from(ErrorInfoType.encode(ErrorInfoType.fromObject(status.errorInfo)).finish()),
    });
  }
  if (status.fieldViolations && status.fieldViolations.length > 0) {
    details.push({
      type_url: BAD_REQUEST_URL,
      value: Buffer.from(
        BadRequestType.encode(BadRequestType.fromObject({ field_violations: status.fieldViolations })).finish(),
      ),
    });
  }
  return { code: status.code, message: status.message, details };
}

/** Encodes a google.rpc.Status with ErrorInfo and BadRequest details as Any. */
export function encodeStatusDetails(status: StatusDetails): Buffer {
  return Buffer.from(StatusType.encode(StatusType.fromObject(statusMessage(status))).finish());
}

/** Decodes `grpc-status-details-bin`; unknown detail types are skipped. */
export function decodeStatusDetails(bytes: Uint8Array): StatusDetails {
  return statusFromMessage(
    StatusType.toObject(StatusType.decode(bytes), { defaults: true }) as {
      code: number;
      message: string;
      details: { type_url: string; value: Uint8Array }[];
    },
  );
}

/** Unpacks a google.rpc.Status message's ErrorInfo and BadRequest; unknown detail types are skipped. Throws on undecodable details. */
export function statusFromMessage(status: {
  code: number;
  message: string;
  details: readonly { type_url: string; value: Uint8Array }[];
}): StatusDetails {
  const decoded: StatusDetails = { code: status.code, message: status.message };
  for (const any of status.details) {
    if (any.type_url === ERROR_INFO_URL) {
      decoded.errorInfo = ErrorInfoType.toObject(ErrorInfoType.decode(any.value), { defaults: true }) as ErrorInfo;
    } else if (any.type_url === BAD_REQUEST_URL) {
      const badRequest = BadRequestType.toObject(BadRequestType.decode(any.value), { defaults: true }) as {
        field_violations: FieldViolation[];
      };
      decoded.fieldViolations = badRequest.field_violations.map(({ field, description }) => ({ field, description }));
    }
  }
  return decoded;
}

/** What a client branches on: the gRPC code and the protocol reason. */
export interface RemoteFailure {
  code: number;
  /** The reason of an ErrorInfo in ERROR_DOMAIN, else the `fencing-reason` trailer, else ''. */
  reason: string;
  /** That ErrorInfo's metadata, such as `fence` or `remaining_ms`; {} without one. */
  metadata: Record<string, string>;
  fieldViolations: FieldViolation[];
  message: string;
}

/** The trailing metadata key that repeats the reason for clients without the googleapis protos. */
export const REASON_KEY = 'fencing-reason';

interface MetadataLike {
  get(key: string): (string | Buffer)[];
}

/**
 * Reads code, reason and details from an error a grpc-js client returned.
 * Never throws: a malformed or absent details trailer yields empty details.
 * An ErrorInfo of another domain (a proxy's, say) is not ours to branch on:
 * reasons are only unique within their domain.
 */
export function remoteFailure(error: { code?: number; details?: string; metadata?: MetadataLike }): RemoteFailure {
  const failure: RemoteFailure = {
    code: error.code ?? 2,
    reason: '',
    metadata: {},
    fieldViolations: [],
    message: error.details ?? '',
  };
  const trailer = error.metadata?.get(REASON_KEY)[0];
  if (typeof trailer === 'string') failure.reason = trailer;
  const bin = error.metadata?.get(STATUS_DETAILS_KEY)[0];
  if (bin instanceof Buffer) {
    try {
      addDetails(failure, decodeStatusDetails(bin));
    } catch {
      // A peer that sent garbage details still has its code and trailer.
    }
  }
  return failure;
}

/**
 * Reads code, reason and details from a google.rpc.Status message (a
 * WriteStream refusal). Never throws: undecodable details yield empty ones.
 */
export function remoteFailureOfStatus(status: {
  code: number;
  message: string;
  details: readonly { type_url: string; value: Uint8Array }[];
}): RemoteFailure {
  const failure: RemoteFailure = {
    code: status.code,
    reason: '',
    metadata: {},
    fieldViolations: [],
    message: status.message,
  };
  try {
    addDetails(failure, statusFromMessage(status));
  } catch {
    // As above: the code alone still says what kind of refusal it was.
  }
  return failure;
}

/** Takes the reason and metadata of an ErrorInfo in ERROR_DOMAIN (only), and the field violations. */
function addDetails(failure: RemoteFailure, details: StatusDetails): void {
  if (details.errorInfo?.domain === ERROR_DOMAIN) {
    failure.reason = details.errorInfo.reason;
    failure.metadata = details.errorInfo.metadata;
  }
  failure.fieldViolations = details.fieldViolations ?? [];
}
