// Runs a periodic task on a real timer, never two runs at once. This is
// where L8's and R3's triggers live; what they decide is in core/.

/** A running periodic task. */
export interface Sweeper {
  /** Stops scheduling and resolves once a run in progress has finished. */
  stop(): Promise<void>;
}

/**
 * Calls `task` every `intervalMs` (measured from the end of the previous
 * run). A rejected run is reported to `onError` and the schedule goes on.
 * The timer does not keep the process alive.
 */
export function startSweeper(
  intervalMs: number,
  task: () => Promise<unknown>,
  onError: (error: unknown) => void,
): Sweeper {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const schedule = () => {
    timer = setTimeout(() => {
      running = task().then(
        () => undefined,
        (error: unknown) => onError(error),
      );
      void running.then(() => {
        if (!stopped) schedule();
      });
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
