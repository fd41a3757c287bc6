// How every fencer client opens its channel: plaintext, or TLS trusting a
// given CA and presenting a client certificate when the server requires one
// (mutual TLS, A2). One place, so the worker library, the coordinator's sink
// client and `fencer health` cannot drift apart.
import * as grpc from '@grpc/grpc-js';

/** TLS for a client channel, as PEM. */
export interface ClientTls {
  /** The CA that signed the server's certificate; absent: the system's roots. */
  readonly ca?: Buffer;
  /** Client certificate and its key (both or neither), for servers that require one. */
  readonly cert?: Buffer;
  readonly key?: Buffer;
}

/** TLS channel credentials for `tls`, or plaintext when it is absent. */
export function channelCredentials(tls: ClientTls | undefined): grpc.ChannelCredentials {
  return tls
    ? grpc.credentials.createSsl(tls.ca ?? null, tls.key ?? null, tls.cert ?? null)
    : grpc.credentials.createInsecure();
}
