// How every `fencer` subcommand turns its flags into a frozen config and
// runs: strict boolean environment variables, and a ConfigError as one
// `error:` line and exit 1, never a stack trace.
import type { Command, Option } from 'commander';
import { ConfigError } from './config-error.js';

/**
 * Commander sets a boolean flag whenever its variable exists, so
 * FENCER_SINK_INSECURE=false would silently switch auth off. Only an explicit
 * yes counts; anything unclear is refused.
 */
function envFlag(name: string, value: string | undefined): boolean {
  const normalized = (value ?? '').trim().toLowerCase();
  if (['1', 'true', 'yes'].includes(normalized)) return true;
  if (['', '0', 'false', 'no'].includes(normalized)) return false;
  throw new ConfigError(`${name} must be 1/true/yes or 0/false/no, got "${value}"`);
}

/**
 * Adds `options` and an action to `command`: boolean flags taken from the
 * environment are re-read strictly (envFlag), `build` validates into a frozen
 * config, `run` also gets the command's declared arguments, and a
 * ConfigError from `build` or `run` ends in a one-line
 * `error: ...` and exit 1.
 */
export function configuredCommand<O extends object, C>(
  command: Command,
  options: readonly Option[],
  build: (options: O) => C,
  run: (config: C, ...args: string[]) => Promise<void>,
): Command {
  for (const option of options) command.addOption(option);
  // Commander calls the action with each declared argument, then the
  // options, then the command itself.
  return command.showHelpAfterError(false).action(async (...received: unknown[]) => {
    const cmd = received.at(-1) as Command;
    const parsed = received.at(-2) as O;
    const args = received.slice(0, -2) as string[];
    try {
      for (const option of options) {
        const name = option.attributeName();
        if (option.isBoolean() && option.envVar && cmd.getOptionValueSource(name) === 'env') {
          (parsed as Record<string, unknown>)[name] = envFlag(option.envVar, process.env[option.envVar]);
        }
      }
      await run(build(parsed), ...args);
    } catch (error) {
      if (error instanceof ConfigError) cmd.error(`error: ${error.message}`, { code: 'fencer.config' });
      throw error;
    }
  });
}
