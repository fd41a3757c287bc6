import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs on stderr (stdout carries only the ready line). Level from
 * FENCER_LOG_LEVEL, default info. bigint fields are logged as strings.
 */
export function createLogger(service: string, level = process.env.FENCER_LOG_LEVEL ?? 'info'): Logger {
  return pino(
    { name: service, level, base: { service, pid: process.pid } },
    pino.destination({ fd: 2, sync: true }),
  );
}

/** A logger that drops everything; for in-process tests. */
export const silentLogger: Logger = pino({ level: 'silent' });
