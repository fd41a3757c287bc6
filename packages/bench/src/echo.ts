// The raw gRPC limit the fencer servers are measured against: a grpc-js
// server that does nothing but echo bytes, unary and over a bidi stream. No
// proto, no auth, no validation, no storage: what is left is the cost of
// grpc-js itself on this machine, the floor any unary handler stands on.
import * as grpc from '@grpc/grpc-js';

const bytes = (buffer: Buffer) => buffer;

/** bench.Echo: Unary returns its request; Stream returns each message it receives, in order. */
export const ECHO_SERVICE: grpc.ServiceDefinition = {
  Unary: {
    path: '/bench.Echo/Unary',
    requestStream: false,
    responseStream: false,
    requestSerialize: bytes,
    requestDeserialize: bytes,
    responseSerialize: bytes,
    responseDeserialize: bytes,
  },
  Stream: {
    path: '/bench.Echo/Stream',
    requestStream: true,
    responseStream: true,
    requestSerialize: bytes,
    requestDeserialize: bytes,
    responseSerialize: bytes,
    responseDeserialize: bytes,
  },
};

/** A client of bench.Echo. */
export interface EchoClient extends grpc.Client {
  Unary(
    request: Buffer,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: (error: grpc.ServiceError | null, response?: Buffer) => void,
  ): grpc.ClientUnaryCall;
  Stream(metadata?: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<Buffer, Buffer>;
}

/** The constructor of bench.Echo clients. */
export const EchoClient = grpc.makeGenericClientConstructor(ECHO_SERVICE, 'Echo') as unknown as new (
  address: string,
  credentials: grpc.ChannelCredentials,
) => EchoClient;

/** Handlers that echo: the whole server. */
export const echoHandlers: grpc.UntypedServiceImplementation = {
  Unary: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
    callback(null, call.request),
  Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
    call.on('data', (message: Buffer) => call.write(message));
    call.on('end', () => call.end());
  },
};
