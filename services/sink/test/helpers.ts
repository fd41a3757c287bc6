// The sink's own test helper: any SinkApi (a real engine or a deliberately
// broken one) served over real gRPC.
import {
  DEFAULT_LIMITS,
  insecureAuthenticator,
  silentLogger,
  startGrpcServer,
  type RunningServer,
} from '@fencer/server-kit';
import { SERVICE_NAMES, fencing } from '@fencer/proto';
import { sinkHandlers } from '../src/grpc/handlers.js';
import type { SinkApi } from '../src/core/sink-engine.js';

/**
 * Serves `api` (an engine over a hand-cranked store, or a deliberately
 * broken one) as fencing.v1.Sink on 127.0.0.1:0, without auth.
 */
export function serveSinkApi(api: SinkApi): Promise<RunningServer> {
  return startGrpcServer({
    serviceName: SERVICE_NAMES.sink,
    listen: '127.0.0.1:0',
    definition: fencing.Sink.service,
    handlers: sinkHandlers(api, { log: silentLogger, limits: DEFAULT_LIMITS }),
    authenticator: insecureAuthenticator,
    maxReceiveMessageBytes: 4 * DEFAULT_LIMITS.maxPayloadBytes,
    log: silentLogger,
  });
}
