// A Bloom filter over stored result keys, so that a Write of a new result
// id — the common case — learns that the id is not stored without asking
// LevelDB. Its size is fixed when it is made: memory does not grow with the
// results stored; past its capacity it only answers "maybe" more often, and
// a "maybe" costs what every Write cost before, one read.
//
// Written here rather than taken from npm: the packages at hand hash keys
// through general-purpose digests several times slower than the LevelDB
// read this is meant to save.

/** Hash functions per key: the optimum for 10 bits per key, ~1 % false "maybe". */
const PROBES = 7;

export class KeyFilter {
  readonly #bits: Uint8Array;
  readonly #size: number;

  /** A filter of `bytes` bytes: 10 bits per key keeps false "maybe"s near 1 %. */
  constructor(bytes: number) {
    this.#bits = new Uint8Array(bytes);
    this.#size = bytes * 8;
  }

  add(key: string): void {
    const [h1, h2] = hashes(key);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + i * h2) % this.#size;
      this.#bits[bit >>> 3]! |= 1 << (bit & 7);
    }
  }

  /** false: `key` was never added. true: it may have been. */
  mayContain(key: string): boolean {
    const [h1, h2] = hashes(key);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + i * h2) % this.#size;
      if ((this.#bits[bit >>> 3]! & (1 << (bit & 7))) === 0) return false;
    }
    return true;
  }
}

/**
 * Two 32-bit FNV-1a-style hashes of the key's UTF-16 code units, with
 * different primes and a final mix, combined by double hashing (Kirsch and
 * Mitzenmacher): as good as independent hash functions for a Bloom filter.
 * The second is odd, so probes never repeat one bit.
 */
function hashes(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < key.length; i++) {
    const unit = key.charCodeAt(i);
    a = Math.imul(a ^ unit, 0x01000193);
    b = Math.imul(b ^ unit, 0x5bd1e995);
  }
  return [mix(a) >>> 0, (mix(b) | 1) >>> 0];
}

/** Murmur3's finalizer: every input bit reaches every output bit. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}
