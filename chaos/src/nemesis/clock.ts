// Clock faults: a process started under libfaketime (Debian's `faketime`)
// runs on a clock whose rate a nemesis changes during the run, by rewriting
// the process's timestamp file. L1 says the coordinator judges time on its
// own clock alone: one whose clock runs fast or slow must still keep S1–S6,
// and a worker whose clock runs slow must be fenced by the sink (F1), never
// believed.
//
// What libfaketime 0.9.10 does (its source, and Node 20 under it):
// - It fakes CLOCK_MONOTONIC as well as the wall clock, so performance.now(),
//   libuv's timers and grpc-js's deadlines all follow the fake rate; it
//   scales epoll_wait's timeout by the rate, so a 1 s timer at x4 fires
//   after 0.25 s.
// - An offset spec ("+0 x4") makes a clock read `start + (now - start) x
//   rate`, `start` being when the library was loaded. A new rate in the file
//   rescales all the time since then: a process 2 s old going from x4 to x0.5
//   saw performance.now() step back 7 s. FAKETIME_XRESET, meant to smooth
//   that, re-anchors CLOCK_MONOTONIC on the last faked *wall-clock* reading,
//   which Node need not have made: performance.now() stepped back too, past
//   zero.
// - A "start at" spec ("@<epoch seconds> x4" with FAKETIME_FMT=%s) instead
//   re-anchors every clock when the process reads it: from that moment its
//   clocks read that value plus the time since, times the rate.
// So each rewrite here is a start-at spec whose value is where this side's
// model says the process's clock is, plus margins (a rewrite is not
// instant, and a thread may wait for the library's lock meanwhile:
// REWRITE_WINDOW_MS, LOCK_WAIT_MS). With FAKETIME_NO_CACHE the process reads
// the file at every clock reading, so the first reading after a rewrite
// starts from that value: never below an earlier reading, and above it only
// by the margins plus whatever the model overestimated. 1,350 rate changes
// up and down saw performance.now() step back zero times
// (chaos/test/nemesis/clock.test.ts checks a dozen).
//
// The model overestimates by what it cannot see: when the process read the
// new spec. The file's access time shows that (it is reset to 0 before each
// rewrite, and the first read sets it), so the model knows an upper bound of
// how late each rewrite took effect, and from it how far the process's clock
// may have run ahead of `maxRate` (bound()). That, and the model's inverse
// (earliestSharedMs), is what the history and the checker need.
import { existsSync, mkdtempSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { defineNemesis, type Nemesis } from './fault.js';

/** The clock the history uses (see @fencer/worker's events): ms on `performance.timeOrigin + performance.now()`. */
const sharedNowMs = () => performance.timeOrigin + performance.now();

/**
 * How long a rewrite of the file may take, in real ms: a clock reading made
 * while the old spec is still in place is ahead of where the model was when
 * the rewrite began by up to this times the old rate, so each new value is
 * that much ahead of the model, and a rewrite that takes longer is refused
 * after the fact. Files live on tmpfs where there is one: there a rewrite
 * takes well under a millisecond (once in a thousand on a machine loaded
 * nine times over, more than 20 ms), while on ext4 a rename over a file
 * waited up to 150 ms for the journal.
 */
export const REWRITE_WINDOW_MS = 50;

/**
 * How long a thread may wait between reading the real clock and taking the
 * library's lock, in real ms: if another thread reads the new spec in
 * between, the waiting one gets the new value less this times the new rate,
 * so each new value is that much further ahead. Not checked, and under load
 * the wait is as long as the lock's holder is preempted: with no margin a
 * few changes in a thousand stepped back by 1 to 20 ms, with 20 ms about one
 * in a thousand, with 50 ms none of 1,350 on a machine loaded nine times over.
 */
export const LOCK_WAIT_MS = 50;

/** Where clock files go: tmpfs if the machine has /dev/shm. */
const CLOCK_DIR_PARENT = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

/** Rates outside this range are refused: libfaketime parses the rate with atof, and an extreme one is no useful fault. */
const RATE_RANGE = [0.01, 100] as const;

/** How fast a process's clock may have run against the shared clock: over any stretch, at most maxRate times it plus aheadMs. */
export interface ClockRateBound {
  readonly maxRate: number;
  readonly aheadMs: number;
}

/** One spec the process runs (or will run) on, as the model sees it. */
interface Segment {
  /** Shared clock: the earliest the process can have read the spec. */
  readonly fromMs: number;
  /** The process's clock at `fromMs` in the model; it reads exactly this when it reads the spec, never earlier. */
  readonly fakeMs: number;
  readonly rate: number;
  /** How far the model stepped up at `fromMs` (the rewrite's margins, less the time it took). */
  readonly stepMs: number;
  /** Shared clock: when the rewrite was done, so no reading could find the previous spec any more. */
  readonly doneMs: number;
  /** Shared clock: by when the process had certainly read the spec, or stopped being able to (a newer spec replaced it). */
  readByMs?: number;
}

const MULTIARCH: Readonly<Partial<Record<string, string>>> = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' };

/** The preloaded library: the thread-safe build, since Node reads its clocks from several threads. */
export function libfaketime(): string {
  const multiarch = MULTIARCH[process.arch];
  const candidates = [
    ...(multiarch ? [`/usr/lib/${multiarch}/faketime/libfaketimeMT.so.1`] : []),
    '/usr/local/lib/faketime/libfaketimeMT.so.1',
  ];
  const found = candidates.find((path) => existsSync(path));
  if (!found) {
    throw new Error(
      `libfaketime is not installed (Debian: apt-get install faketime); looked for ${candidates.join(', ')}`,
    );
  }
  return found;
}

/**
 * The clock of a process started with `env` in its environment: libfaketime
 * preloaded, reading its spec from `file` at every clock reading. It starts
 * at the real rate and time; setRate changes the rate with the process's
 * clocks continuous and monotonic. One process at a time per clock: one
 * started later on the same file (a restart) starts from the spec in force,
 * which the model follows only if restarting() rewrote it just before, and
 * runs at the rate set only once started() says it is up.
 * close() once the last process has exited.
 */
export class FaketimeClock {
  readonly file: string;
  /** Add to the environment of the process to run on this clock. */
  readonly env: Readonly<NodeJS.ProcessEnv>;
  /**
   * Called after each rewrite to make the process read its clock at once
   * (wake its event loop), so that the model's overestimate, and with it
   * bound().aheadMs, stays small. By default nothing: the process reads the
   * new spec at its next clock reading, whenever that comes.
   */
  wake: () => void = () => {};
  readonly #segments: Segment[];
  /** While a process starts (restarting() until started()): the rate to run at once it is up. */
  #rateOnceStarted: number | undefined;
  #closed = false;

  private constructor(file: string, env: NodeJS.ProcessEnv, first: Segment) {
    this.file = file;
    this.env = Object.freeze(env);
    this.#segments = [first];
  }

  /**
   * A clock at the real rate, its file named after `name` in a directory of
   * its own (on tmpfs if there is one). Throws if libfaketime is not
   * installed or the file cannot be written.
   */
  static create(name: string): FaketimeClock {
    const library = libfaketime();
    const file = join(mkdtempSync(join(CLOCK_DIR_PARENT, 'fencer-clock-')), `${name}.faketime`);
    const env = {
      LD_PRELOAD: library,
      FAKETIME_TIMESTAMP_FILE: file,
      FAKETIME_NO_CACHE: '1',
      FAKETIME_FMT: '%s',
      // File times stay real: the fault is the clock, not what stat() says.
      NO_FAKE_STAT: '1',
      // It would take precedence over the file.
      FAKETIME: undefined,
    };
    writeFileSync(file, '+0\n');
    // "+0" reads the wall clock: at most the millisecond Date.now() drops
    // ahead of this (a step of the system clock, which a run is assumed not
    // to see, aside).
    const fromMs = sharedNowMs();
    const first = { fromMs, fakeMs: Date.now() + 1, rate: 1, stepMs: 0, doneMs: fromMs, readByMs: fromMs };
    return new FaketimeClock(file, env, first);
  }

  /** The rate the latest setRate asked for: while a process starts, the one it will run at once started() is called. */
  get rate(): number {
    return this.#rateOnceStarted ?? this.#segments.at(-1)!.rate;
  }

  /**
   * Makes the process's clock run at `rate` times the real rate from its
   * next clock reading on, continuing from where it is. Throws RangeError for
   * a rate outside [0.01, 100], and Error if the rewrite took longer than
   * REWRITE_WINDOW_MS: the new rate is then in place, but a reading made
   * during the rewrite may be ahead of it, so the clock may have stepped back.
   * While a process starts (see restarting()) the rate waits for started().
   */
  setRate(rate: number): void {
    if (!(rate >= RATE_RANGE[0] && rate <= RATE_RANGE[1])) {
      throw new RangeError(`a clock rate must be within [${RATE_RANGE.join(', ')}], not ${rate}`);
    }
    if (this.#rateOnceStarted !== undefined) {
      this.#rateOnceStarted = rate;
      return;
    }
    this.#rewrite(rate);
  }

  /** Writes a spec at `rate` from the model's value; throws as setRate does. */
  #rewrite(rate: number): void {
    const previous = this.#segments.at(-1)!;
    const startedMs = sharedNowMs();
    // In whole microseconds, rounded up, so the spec says exactly the model's value.
    const micros = Math.ceil((this.#modelAt(startedMs + REWRITE_WINDOW_MS) + LOCK_WAIT_MS * rate) * 1000);
    const fakeMs = micros / 1000;
    const next = `${this.file}.next`;
    writeFileSync(next, `@${Math.floor(micros / 1e6)}.${String(micros % 1e6).padStart(6, '0')} x${rate}\n`);
    // The process's first read of the new file sets its access time (relatime).
    utimesSync(next, 0, 0);
    const fromMs = sharedNowMs();
    renameSync(next, this.file);
    const doneMs = sharedNowMs();
    previous.readByMs ??= doneMs;
    const segment: Segment = { fromMs, fakeMs, rate, stepMs: fakeMs - this.#modelAt(fromMs), doneMs };
    this.#segments.push(segment);
    this.wake();
    this.#watch(segment);
    if (doneMs - startedMs > REWRITE_WINDOW_MS) {
      throw new Error(
        `rewriting ${this.file} took ${Math.round(doneMs - startedMs)} ms, more than ${REWRITE_WINDOW_MS}: the process's clock may have stepped back`,
      );
    }
  }

  /**
   * The earliest shared-clock time at which the process's clock can have
   * read `fakeMs` (ms on its `performance.timeOrigin + performance.now()`):
   * by the model, never later than when it really did. A soak saw the model
   * run up to 22 ms ahead of a worker's readings (cause not pinned), so the
   * harness also bounds it by what it saw itself (scenario/shared-clock.ts).
   */
  earliestSharedMs(fakeMs: number): number {
    // The model only rises, and steps up where a spec begins: a reading
    // between two segments' values was made at the later one's start.
    const k = this.#lastIndex((s) => s.fakeMs <= fakeMs);
    const { fromMs, fakeMs: startMs, rate } = this.#segments[k]!;
    return Math.min(fromMs + (fakeMs - startMs) / rate, this.#segments[k + 1]?.fromMs ?? Infinity);
  }

  /**
   * How fast the process's clock may have run against the shared clock so
   * far: the fastest rate set, and `aheadMs`, every step the model took plus
   * the most it can have overestimated one reading. The clock between two
   * readings advances no more than the model does between them, plus what
   * the model overestimated the first. {maxRate: 1, aheadMs: 0} while the
   * rate was never changed. With `windowMs`, the bound holds for stretches
   * of at most that long only, and counts the steps of the model that one
   * such stretch can span rather than all of them: what a check needs that
   * compares the clock over spans no longer than a TTL, in a long run with
   * many rewrites.
   */
  bound(windowMs = Infinity): ClockRateBound {
    const nowMs = sharedNowMs();
    const changes = this.#segments.slice(1);
    if (changes.length === 0) return { maxRate: 1, aheadMs: 0 };
    // Under the first spec the model is ahead by the millisecond Date.now() dropped.
    let [most, before] = [1, 1];
    for (const s of changes) {
      // A reading of this spec: read late (a rewrite not seen read yet counts until now), or after a wait for the lock.
      const reading = ((s.readByMs ?? nowMs) - s.fromMs + LOCK_WAIT_MS) * s.rate;
      // A reading of the previous spec during the rewrite, where the model already follows this one.
      const during = s.stepMs + (s.doneMs - s.fromMs) * s.rate + before;
      [most, before] = [Math.max(most, reading, during), reading];
    }
    // The most the steps within one window add up to; a window holding the most starts at a step.
    const steps = Math.max(
      ...changes.map((first) =>
        changes
          .filter((s) => s.fromMs >= first.fromMs && s.fromMs <= first.fromMs + windowMs)
          .reduce((sum, s) => sum + Math.max(0, s.stepMs), 0),
      ),
    );
    return { maxRate: Math.max(...this.#segments.map((s) => s.rate)), aheadMs: steps + most };
  }

  /**
   * Call before a process starts on this clock in place of one that exited
   * (a crash's restart), and started() once it is up. It rewrites the spec
   * from the model's value, as setRate does, so the new process's clock
   * starts where the model has the clock and the model follows it from its
   * first reading (bound() counts how late that came). Without it the new
   * process would start from the last spec's value, behind the model by the
   * time since that rewrite times its rate, and jump ahead by as much at the
   * next rewrite.
   *
   * The spec runs at the real rate until started(): Node fixes a process's
   * time origin from two clock readings in a row (monotonic, then wall), so
   * `timeOrigin + now()` is ahead of the wall clock, and of the model, by the
   * time between them times the rate. At x1 that is what every process's
   * origin carries (CLOCK_FLOOR_MS); at x50 a probe read 2.7 ms ahead, and
   * at x4 under load a CI run saw 7 ms. Throws as setRate does.
   */
  restarting(): void {
    this.#rateOnceStarted = this.rate;
    this.#rewrite(1);
  }

  /** The restarted process is up (its time origin fixed): the rate setRate last asked for takes effect. Throws as setRate does. */
  started(): void {
    const rate = this.#rateOnceStarted;
    if (rate === undefined) return;
    this.#rateOnceStarted = undefined;
    if (rate !== this.#segments.at(-1)!.rate) this.#rewrite(rate);
  }

  /** Stops watching for the process's reads and removes the file: only once the process has exited, or it falls back to the real time. */
  close(): void {
    this.#closed = true;
    rmSync(dirname(this.file), { recursive: true, force: true });
  }

  /** The process's clock in the model at shared time `atMs`: never below what it reads then. */
  #modelAt(atMs: number): number {
    const segment = this.#segments[this.#lastIndex((s) => s.fromMs <= atMs)]!;
    return segment.fakeMs + (atMs - segment.fromMs) * segment.rate;
  }

  /** The last segment that passes `test`, else the first (which stands for all time before it). */
  #lastIndex(test: (segment: Segment) => boolean): number {
    let k = this.#segments.length - 1;
    while (k > 0 && !test(this.#segments[k]!)) k--;
    return k;
  }

  /** Polls the file's access time until the process has read `segment`, a newer spec replaced it, or the clock is closed. */
  #watch(segment: Segment): void {
    const poll = () => {
      if (this.#closed || segment.readByMs !== undefined) return;
      const stat = statSync(this.file, { throwIfNoEntry: false });
      if (!stat) return; // removed with its directory: nothing reads it any more
      if (stat.atimeMs !== 0) {
        segment.readByMs = sharedNowMs();
        return;
      }
      // Often at first, when a busy process reads it; the bound is only as late as the poll that sees it.
      const waitedMs = sharedNowMs() - segment.fromMs;
      setTimeout(poll, Math.min(20, Math.max(1, waitedMs / 8))).unref();
    };
    poll();
  }
}

/**
 * Clock skew: the process on `clock` runs at `rate` times the real rate (4:
 * four times too fast, 0.25: four times too slow) until the heal sets it
 * back to the real rate; its clock stays continuous throughout, so after the
 * heal it is as far ahead or behind as the fault left it. `target` names the
 * process in the fault's record.
 */
export function clockSkew(clock: FaketimeClock, target: string, rate: number): Nemesis {
  return defineNemesis('clock-skew', { process: target }, async () => {
    clock.setRate(rate);
    return {
      detail: `clock x${rate} (${clock.file})`,
      undo: async () => {
        clock.setRate(1);
        return 'clock x1';
      },
    };
  });
}
