// TCP addresses as Toxiproxy's Go server reads, resolves and reports them
// (TOXIPROXY-API.md §3.1): `listen` strings are split and resolved like Go's
// net package, and errors keep Go's wording because the API returns them
// verbatim with status 500.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { joinHostPort } from '@fencer/cli-kit';

/** An address the API cannot use; the message is Go's text, returned with status 500. */
export class AddressError extends Error {
  override name = 'AddressError';
}

/** A resolved TCP address: `ip` is undefined for "all interfaces" (an empty host). */
export interface TcpAddress {
  readonly ip: string | undefined;
  readonly port: number;
}

/** Splits `host:port` with Go's rules and messages (`missing port in address`, `too many colons in address`...). */
export function splitGoHostPort(address: string): { host: string; port: string } {
  const fail = (why: string): never => {
    throw new AddressError(`address ${address}: ${why}`);
  };
  const colon = address.lastIndexOf(':');
  if (colon < 0) return fail('missing port in address');
  let host: string;
  if (address.startsWith('[')) {
    const close = address.indexOf(']');
    if (close < 0) return fail("missing ']' in address");
    if (close + 1 === address.length) return fail('missing port in address');
    if (close + 1 !== colon)
      return fail(address.indexOf(':', close + 1) < 0 ? 'missing port in address' : 'too many colons in address');
    host = address.slice(1, close);
    if (host.includes('[') || host.includes(']')) return fail("unexpected '[' in address");
  } else {
    host = address.slice(0, colon);
    if (host.includes(':')) return fail('too many colons in address');
    if (host.includes('[')) return fail("unexpected '[' in address");
    if (host.includes(']')) return fail("unexpected ']' in address");
  }
  if (address.slice(colon + 1).includes('[')) return fail("unexpected '[' in address");
  if (address.slice(colon + 1).includes(']')) return fail("unexpected ']' in address");
  return { host, port: address.slice(colon + 1) };
}

/**
 * Resolves `listen` the way Go's ResolveTCPAddr does: an empty string or host
 * means all interfaces, a name resolves to one address (IPv4 preferred).
 * Throws AddressError with Go's message.
 */
export async function resolveTcpAddress(listen: string): Promise<TcpAddress> {
  // Go's Listen takes "" as ":0" (TOXIPROXY-API.md §3.1: a missing listen binds all interfaces).
  const { host, port: portText } = listen === '' ? { host: '', port: '0' } : splitGoHostPort(listen);
  let port: number;
  if (portText === '') port = 0;
  else if (/^\d+$/.test(portText)) {
    port = Number(portText);
    if (port > 65_535) throw new AddressError(`address ${portText}: invalid port`);
  } else throw new AddressError(`lookup tcp/${portText}: unknown port`);
  if (host === '') return { ip: undefined, port };
  if (isIP(host) !== 0) return { ip: host, port };
  let addresses: { address: string; family: number }[];
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    throw new AddressError(`lookup ${host}: no such host`);
  }
  const chosen = addresses.find((a) => a.family === 4) ?? addresses[0];
  if (!chosen) throw new AddressError(`lookup ${host}: no such host`);
  return { ip: chosen.address, port };
}

/** Go's TCPAddr.String(): `ip:port`, `[v6]:port`, or `:port` for no ip. */
export function formatTcpAddress(address: TcpAddress): string {
  return address.ip === undefined ? `:${address.port}` : joinHostPort(address.ip, address.port);
}

/** Go's wording for a failed bind, e.g. `bind: address already in use`. */
export function bindErrorText(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'EADDRINUSE':
      return 'bind: address already in use';
    case 'EACCES':
      return 'bind: permission denied';
    case 'EADDRNOTAVAIL':
      return 'bind: cannot assign requested address';
    default:
      return error.message;
  }
}
