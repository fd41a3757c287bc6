// Argument parsers shared by every `fencer` subcommand: a bad value is a
// one-line CLI error and a non-zero exit, never a stack trace.
import { InvalidArgumentError } from 'commander';
import { StartupError } from './startup-error.js';

/** Splits HOST:PORT or [IPv6]:PORT. Throws InvalidArgumentError. */
export function splitHostPort(value: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65_535) throw new InvalidArgumentError(`expected HOST:PORT (port 0-65535), got "${value}"`);
  return { host: (match[1] ?? match[2])!, port };
}

/** splitHostPort for start-up code: a malformed address is a StartupError naming `what`. */
export function listenAddress(what: string, value: string): { host: string; port: number } {
  try {
    return splitHostPort(value);
  } catch (error) {
    throw new StartupError(`cannot ${what} on ${value}: ${(error as Error).message}`);
  }
}

/** HOST:PORT again, with an IPv6 host in brackets: the form splitHostPort reads. */
export function joinHostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Commander parser for HOST:PORT; returns the value unchanged. */
export function hostPort(value: string): string {
  splitHostPort(value);
  return value;
}

/**
 * Commander parser for HOST:PORT[,HOST:PORT...] (coordinator replicas, H7;
 * etcd endpoints, H1): every entry well-formed, none empty, none twice.
 */
export function hostPortList(value: string): readonly string[] {
  const entries = value.split(',').map((entry) => entry.trim());
  entries.forEach((entry, index) => {
    if (entry === '') throw new InvalidArgumentError(`address ${index + 1} of "${value}" is empty`);
    try {
      splitHostPort(entry);
    } catch (error) {
      throw new InvalidArgumentError(`address ${index + 1} of "${value}": ${(error as Error).message}`);
    }
    if (entries.indexOf(entry) !== index) throw new InvalidArgumentError(`"${entry}" is listed twice in "${value}"`);
  });
  return Object.freeze(entries);
}

/** Commander parser for an integer >= 1. */
export function positiveInteger(value: string): number {
  return integerFrom(value, 1, 'a positive integer');
}

/** Commander parser for an integer >= 0. */
export function nonNegativeInteger(value: string): number {
  return integerFrom(value, 0, 'a non-negative integer');
}

function integerFrom(value: string, min: number, what: string): number {
  if (!/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError(`expected ${what}, got "${value}"`);
  }
  return Number(value);
}
