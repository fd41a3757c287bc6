// The one place that knows where the `fencer` executable is. The supervisor
// starts fencer processes; it never imports the CLI's code, so the path is
// looked up at run time, not through an import that would run up a floor.
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

/**
 * The `fencer` entry point to run with `node`: $FENCER_BIN when set (an
 * installed fencer elsewhere), else the bin of the workspace's @fencer/cli.
 * Throws if neither can be found.
 */
export function fencerBin(): string {
  const override = process.env.FENCER_BIN;
  if (override) return resolve(override);
  const manifest = createRequire(import.meta.url).resolve('@fencer/cli/package.json');
  return join(dirname(manifest), 'bin', 'fencer.js');
}
