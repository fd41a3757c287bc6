// The sink's own test helper: any SinkApi (a real engine or a deliberately
// broken one) served over real gRPC.
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
