// A real small filesystem for T3's disk-full tests: a tmpfs of a few MiB
// (tests run as root, here and in CI), filled to ENOSPC with a file that can
// be deleted again to free the space.
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './waiting.js';

/** A mounted tmpfs; `unmount()` unmounts it and removes its mount point. */
export interface Tmpfs {
  readonly path: string;
  /** Writes a filler file until the filesystem is full (ENOSPC); returns the bytes written. */
  fill(): number;
  /** Deletes the filler, so the space is free again. */
  free(): void;
  unmount(): void;
}

const FILLER = '.filler';

/** Mounts a tmpfs of `sizeMib` MiB on a fresh directory; throws, naming the cause, if mounting is not allowed. */
export function mountTmpfs(sizeMib: number): Tmpfs {
  const mountPoint = tempDir('fencer-tmpfs-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMib}m`, 'tmpfs', mountPoint.path], { stdio: 'pipe' });
  } catch (error) {
    mountPoint.remove();
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`cannot mount a tmpfs (these tests need root, as CI has): ${stderr ?? String(error)}`);
  }
  const filler = join(mountPoint.path, FILLER);
  return {
    path: mountPoint.path,
    fill() {
      const fd = openSync(filler, 'a');
      const chunk = Buffer.alloc(4096, 0xee);
      let written = 0;
      try {
        for (;;) written += writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      } finally {
        closeSync(fd);
      }
      return written;
    },
    free: () => rmSync(filler, { force: true }),
    unmount() {
      execFileSync('umount', ['-l', mountPoint.path], { stdio: 'pipe' });
      mountPoint.remove();
    },
  };
}
