/** A failure to start that the operator can fix; its message is the whole story. */
export class StartupError extends Error {
  override name = 'StartupError';
}
