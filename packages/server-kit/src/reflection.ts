// Server reflection (v1 and v1alpha) by @grpc/reflection, with one answer
// changed so that grpcurl decodes our status details. To print an Any (a
// google.rpc.ErrorInfo in grpc-status-details-bin), grpcurl resolves its type
// and also asks all_extension_numbers_of_type for it. @grpc/reflection 1.0.4
// answers NOT_FOUND for a message type that has no extensions, where
// grpc-go's reflection answers an empty list; grpcurl takes the error for
// "cannot resolve" and prints raw bytes. Here a message type the server
// reflects gets the empty list; an unknown type is still NOT_FOUND.
import * as grpc from '@grpc/grpc-js';
import type * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, type DescriptorProto } from '@bufbuild/protobuf/wkt';

/** The reflection request and response fields this file reads (proto-loader's camelCase objects). */
interface ReflectionResponse {
  originalRequest?: { messageRequest?: string; allExtensionNumbersOfType?: string };
  errorResponse?: { errorCode?: number };
  allExtensionNumbersResponse?: { baseTypeName: string; extensionNumber: number[] };
}

/** Adds reflection of `files` (limited to `services`) to `server`, both versions. */
export function addReflection(
  server: grpc.Server,
  files: protoLoader.PackageDefinition,
  services: readonly string[],
): void {
  const messageTypes = messageTypeNames(files);
  const answer = (response: ReflectionResponse): ReflectionResponse => {
    const type = response.originalRequest?.allExtensionNumbersOfType;
    if (
      response.originalRequest?.messageRequest !== 'allExtensionNumbersOfType' ||
      response.errorResponse?.errorCode !== grpc.status.NOT_FOUND ||
      type === undefined ||
      !messageTypes.has(type)
    )
      return response;
    const { errorResponse: _, ...rest } = response;
    return { ...rest, allExtensionNumbersResponse: { baseTypeName: type, extensionNumber: [] } };
  };
  new ReflectionService(files, { services: [...services] }).addToServer({
    addService: (service, handlers) =>
      server.addService(
        service,
        Object.fromEntries(
          Object.entries(handlers).map(([name, handler]) => [
            name,
            // The library's handler writes each response to the stream; the answer is changed on its way out.
            (stream: grpc.ServerDuplexStream<unknown, ReflectionResponse>) =>
              (handler as grpc.handleBidiStreamingCall<unknown, ReflectionResponse>)(
                new Proxy(stream, {
                  get(target, key) {
                    if (key === 'write')
                      return (response: ReflectionResponse, ...rest: unknown[]) =>
                        (target.write as (...args: unknown[]) => boolean)(answer(response), ...rest);
                    const value: unknown = Reflect.get(target, key, target);
                    return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
                  },
                }),
              ),
          ]),
        ),
      ),
  });
}

/** The full name of every message type (nested ones included) in the files of `files`. */
function messageTypeNames(files: protoLoader.PackageDefinition): Set<string> {
  const names = new Set<string>();
  const add = (prefix: string, messages: readonly DescriptorProto[]) => {
    for (const message of messages) {
      const name = `${prefix}${message.name}`;
      names.add(name);
      add(`${name}.`, message.nestedType);
    }
  };
  for (const definition of Object.values(files)) {
    for (const bytes of (definition as { fileDescriptorProtos?: readonly Buffer[] }).fileDescriptorProtos ?? []) {
      const file = fromBinary(FileDescriptorProtoSchema, bytes);
      add(file.package ? `${file.package}.` : '', file.messageType);
    }
  }
  return names;
}
