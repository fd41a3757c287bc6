// The bearer token a client command (worker, admin, conformance) reads
// from its --token-file.
import { readFileSync } from 'node:fs';
import { ConfigError } from './config-error.js';

/**
 * The bearer token in a client's --token-file (surrounding whitespace
 * ignored). Throws ConfigError when it cannot be read or is empty.
 */
export function readTokenFile(file: string): string {
  try {
    const token = readFileSync(file, 'utf8').trim();
    if (token) return token;
  } catch (error) {
    throw new ConfigError(
      `cannot read --token-file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  throw new ConfigError(`--token-file ${file} is empty`);
}
