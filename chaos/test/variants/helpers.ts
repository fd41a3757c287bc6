// The real services and their deliberately broken variants as real
// processes, started with the very same command line, so a test can run one
// interaction against both and show the real one safe and the variant not.
import { join } from 'node:path';
import { startFencer, stopFencer, type FencerProcess } from '@fencer/testkit';
import { variantBin, type VariantName } from '@fencer/variants';

/** `fencer sink --insecure` on port 0 with its data in `dir`/`name`, or the variant's script with those flags. */
export function startSinkProcess(dir: string, variant?: VariantName): Promise<FencerProcess> {
  return startFencer(
    ['sink', '--insecure', '--listen', '127.0.0.1:0', '--data', join(dir, variant ?? 'sink')],
    variant === undefined ? {} : { bin: variantBin(variant) },
  );
}

/** `fencer coordinator --insecure` on port 0, wired to `sink`, or the variant's script with those flags. */
export function startCoordinatorProcess(dir: string, sink: string, variant?: VariantName): Promise<FencerProcess> {
  return startFencer(
    [
      'coordinator',
      '--insecure',
      '--listen',
      '127.0.0.1:0',
      '--sink',
      sink,
      '--data',
      join(dir, variant ?? 'coordinator'),
    ],
    variant === undefined ? {} : { bin: variantBin(variant) },
  );
}

/** Stops every process that started (SIGTERM, then SIGKILL). */
export async function stopAll(processes: readonly (FencerProcess | undefined)[]): Promise<void> {
  const started = processes.filter((child) => child !== undefined);
  await Promise.all(started.map((child) => stopFencer(child)));
}
