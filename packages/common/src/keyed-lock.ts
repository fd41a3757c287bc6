/**
 * Serializes async critical sections per key: sections with the same key run
 * one after another in arrival order, different keys run concurrently.
 * Entries are dropped as soon as a key is idle, so memory follows the number
 * of keys in use, not the number ever seen.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `section` once every earlier section of `key` has settled. */
  async run<T>(key: string, section: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((resolve) => (release = resolve));
    this.#tails.set(key, tail);
    await previous;
    try {
      return await section();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }

  /** Keys with a section running or waiting; for tests and metrics. */
  get activeKeys(): number {
    return this.#tails.size;
  }
}
