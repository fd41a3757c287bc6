import { format } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { pino, type Logger } from 'pino';
import { ConfigError } from './server-config.js';

/** pino's logger: JSON lines, `log.info({ field }, 'message')`. */
export type { Logger };

const LEVELS = [...Object.keys(pino.levels.values), 'silent'];

/**
 * JSON logs on stderr (stdout carries only the ready line). Level from
 * FENCER_LOG_LEVEL, default info; an unknown level is a ConfigError.
 */
export function createLogger(service: string, level = process.env.FENCER_LOG_LEVEL ?? 'info'): Logger {
  if (!LEVELS.includes(level))
    throw new ConfigError(`FENCER_LOG_LEVEL must be one of ${LEVELS.join(', ')}, got "${level}"`);
  return pino({ name: service, level, base: { service, pid: process.pid } }, pino.destination({ fd: 2, sync: true }));
}

/** A logger that drops everything; for in-process tests. */
export const silentLogger: Logger = pino({ level: 'silent' });

/**
 * Routes grpc-js's own diagnostics (bind failures, channel errors) into `log`,
 * so a server's stderr holds only JSON lines plus, on a failed start, the one
 * plain-text reason line. Process-wide: call once, from a composition root.
 */
export function routeGrpcLogs(log: Logger): void {
  grpc.setLogger({
    error: (...args: unknown[]) => log.warn({ source: 'grpc-js' }, format(...args)),
    info: (...args: unknown[]) => log.info({ source: 'grpc-js' }, format(...args)),
    debug: (...args: unknown[]) => log.debug({ source: 'grpc-js' }, format(...args)),
  });
}
