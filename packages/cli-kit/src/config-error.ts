/** A configuration the operator must fix; the message is one line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
