// How a run shows where it is, on stderr (stdout is the report): a bar on a
// terminal, a line per measurement anywhere else (CI logs, pipes).
import cliProgress from 'cli-progress';

export interface Progress {
  start(total: number): void;
  /** A step begins: what it is. */
  begin(label: string): void;
  /** The step ends: what it measured. */
  end(label: string, result: string): void;
  /** Something to know that is not a step (a skipped target); only before start. */
  note(text: string): void;
  stop(): void;
}

export function progressOn(stream: NodeJS.WriteStream): Progress {
  return stream.isTTY ? barProgress(stream) : lineProgress(stream);
}

function barProgress(stream: NodeJS.WriteStream): Progress {
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: 'fencer bench [{bar}] {value}/{total} {label}',
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  return {
    start: (total) => bar.start(total, 0, { label: '' }),
    begin: (label) => bar.update({ label }),
    end: () => bar.increment(),
    note: (text) => stream.write(`fencer bench: ${text}\n`),
    stop: () => bar.stop(),
  };
}

function lineProgress(stream: NodeJS.WriteStream): Progress {
  let total = 0;
  let done = 0;
  return {
    start(steps) {
      total = steps;
    },
    begin: () => undefined,
    end(label, result) {
      done += 1;
      stream.write(`fencer bench: [${done}/${total}] ${label}: ${result}\n`);
    },
    note: (text) => stream.write(`fencer bench: ${text}\n`),
    stop: () => undefined,
  };
}
