// The lock model (LOCK) on hand-written lease histories of one resource:
// legal ones pass, each illegal one is reported with its first violating
// operation and the call it conflicts with, unknown outcomes are tried both
// ways, and the search never passes a stretch it could not finish.
import { describe, expect, it } from 'vitest';
import { checkHistory, type CheckOptions } from './check.js';
import type { FaultPeriod, History, Operation, Outcome } from './history.js';

const TTL = 100;
const lost: Outcome = { type: 'unknown', code: 'DEADLINE_EXCEEDED', reason: '' };
const held: Outcome = { type: 'fail', code: 'ABORTED', reason: 'LEASE_HELD' };
const answer = (owner: string, token: number, ttlMs: number, replayed = false): Outcome => ({
  type: 'ok',
  response: {
    lease: { resource: 'r', owner_id: owner, incarnation: '1', token: String(token), ttl_ms: String(ttlMs) },
    replayed,
  },
});

/** Lease calls on resource r, numbered in the order they are added; times are [sent, answered] in ms. */
function leases() {
  const operations: Operation[] = [];
  const add = (owner: string, method: Operation['method'], request: object, at: [number, number], outcome: Outcome) =>
    operations.push({
      id: operations.length + 1,
      process: owner,
      method,
      request: { resource: 'r', owner_id: owner, incarnation: '1', ...request },
      invokedMs: at[0],
      completedMs: at[1],
      outcome,
    });
  return {
    operations,
    /** A fresh grant of `token` by default; `requestId` names the acquisition (R1). */
    acquire: (
      owner: string,
      token: number,
      at: [number, number],
      outcome = answer(owner, token, TTL),
      requestId = '',
    ) => add(owner, 'Acquire', { request_id: requestId || `${owner}-${token}`, ttl_ms: String(TTL) }, at, outcome),
    renew: (owner: string, token: number, at: [number, number], outcome = answer(owner, token, TTL)) =>
      add(owner, 'Renew', { token: String(token), ttl_ms: '0' }, at, outcome),
    release: (owner: string, token: number, at: [number, number], outcome: Outcome = released(true)) =>
      add(owner, 'Release', { token: String(token) }, at, outcome),
  };
}
const released = (value: boolean): Outcome => ({ type: 'ok', response: { released: value } });

type Leases = ReturnType<typeof leases>;
/** The history `build` makes, with `faults` as the nemesis recorded them. */
const history = (build: (h: Leases) => void, faults: readonly FaultPeriod[] = []): History => {
  const h = leases();
  build(h);
  return { operations: h.operations, final: { fences: {}, results: {} }, faults };
};
/** Every violation of that history; the lock model judges all of it. */
const checked = (build: (h: Leases) => void, options?: CheckOptions, faults: readonly FaultPeriod[] = []) => {
  const { violations, unchecked } = checkHistory(history(build, faults), options);
  expect(unchecked).toEqual([]);
  return violations;
};
const lock = (build: (h: Leases) => void, options?: CheckOptions) =>
  checked(build, options).filter((v) => v.rule === 'LOCK');

describe('the lock model', () => {
  const legal: [string, (h: Leases) => void][] = [
    [
      'grants with increasing tokens, each after a release',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.release('a', 1, [20, 30]);
        h.acquire('b', 2, [40, 50]);
        h.release('b', 2, [60, 70]);
        h.acquire('a', 3, [80, 90]);
      },
    ],
    [
      'a takeover once the lease, renewed, has certainly run out',
      (h) => {
        h.acquire('a', 1, [0, 10]); // valid until 100
        h.renew('a', 1, [50, 60]); // valid until 150
        h.acquire('b', 2, [140, 149]); // answered at 149: within the clock uncertainty of 150
      },
    ],
    [
      'a takeover answered late enough, though sent while the lease was valid',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.acquire('b', 2, [50, 120]);
      },
    ],
    [
      'concurrent Acquires, one refused LEASE_HELD',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.acquire('b', 2, [5, 15], held);
        h.release('a', 1, [20, 30]);
        h.acquire('b', 2, [40, 50]);
      },
    ],
    [
      'concurrent grants ordered by token, not by sending',
      (h) => {
        h.acquire('a', 2, [0, 300]);
        h.acquire('b', 1, [5, 15]); // granted first, expired by 105
      },
    ],
    [
      'an unknown Release that took effect: the next grant follows it',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.release('a', 1, [20, 30], lost);
        h.acquire('b', 2, [40, 50]);
      },
    ],
    [
      'an unknown Release that did not take effect: the holder renews',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.release('a', 1, [20, 30], lost);
        h.renew('a', 1, [40, 50]);
      },
    ],
    [
      'an unknown Release delivered after a Renew sent later',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.release('a', 1, [20, 30], lost);
        h.renew('a', 1, [40, 50]);
        h.acquire('b', 2, [60, 70]);
      },
    ],
    [
      'an unknown Release whose window closed: the next stretch starts from either state',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.release('a', 1, [20, 30], lost); // of use only until 100
        h.renew('a', 1, [150, 160]); // so it did not take effect
      },
    ],
    [
      'an unknown Acquire whose replay revealed its token, then renewed and released',
      (h) => {
        h.acquire('a', 1, [0, 50], lost, 'q');
        h.acquire('a', 1, [60, 70], answer('a', 1, TTL, true), 'q');
        h.renew('a', 1, [80, 90]);
        h.release('a', 1, [95, 99]);
        h.acquire('b', 2, [110, 120]);
      },
    ],
    [
      'an unknown Acquire that never took effect',
      (h) => {
        h.acquire('a', 1, [0, 10], lost);
        h.acquire('b', 1, [20, 30]);
      },
    ],
    [
      'an R1 replay of an older grant after a takeover',
      (h) => {
        h.acquire('a', 1, [0, 10], answer('a', 1, TTL), 'q');
        h.acquire('b', 2, [200, 210]);
        h.acquire('a', 1, [220, 230], answer('a', 1, TTL, true), 'q');
      },
    ],
    [
      'a Renew sent after the lease ran out, with no successor (the coordinator may have been slower)',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.renew('a', 1, [150, 160]);
      },
    ],
    [
      'a Release of a superseded lease, answered released=false',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.acquire('b', 2, [200, 210]);
        h.release('a', 1, [220, 230], released(false));
      },
    ],
  ];

  it.each(legal)('passes %s', (_name, build) => {
    expect(lock(build)).toEqual([]);
  });

  const illegal: [string, (h: Leases) => void, { operations: number[]; first: number; says: RegExp }][] = [
    [
      'an Acquire granted while another holder’s lease was valid',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.acquire('b', 2, [50, 60]);
      },
      { operations: [1, 2], first: 2, says: /Acquire #2 \(b\) was granted token 2 while a#1 held token 1.*\(L2\)/ },
    ],
    [
      'an Acquire granted inside a lease that a Renew extended',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.renew('a', 1, [80, 90]); // valid until 180
        h.acquire('b', 2, [150, 160]);
      },
      { operations: [2, 3], first: 3, says: /Renew #2 \(a\) made that lease valid for 100 ms.*answered 20 ms before/ },
    ],
    [
      'the holder granted again while its own lease was valid',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.acquire('a', 2, [20, 30]);
      },
      { operations: [1, 2], first: 2, says: /\(L2\)/ },
    ],
    [
      'two overlapping leases from an unknown Acquire whose replay revealed it',
      (h) => {
        h.acquire('a', 1, [0, 10], lost, 'q');
        h.acquire('a', 1, [20, 30], answer('a', 1, TTL, true), 'q');
        h.renew('a', 1, [40, 50]); // needs the unknown grant; valid until 140
        h.acquire('b', 2, [100, 110]);
      },
      { operations: [3, 4], first: 4, says: /\(L2\)/ },
    ],
    [
      'a token equal to an earlier grant',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.release('a', 1, [20, 30]);
        h.acquire('a', 1, [40, 50], answer('a', 1, TTL), 'again');
      },
      { operations: [1, 3], first: 3, says: /minted token 1, not above token 1, which Acquire #1 \(a\) showed/ },
    ],
    [
      'a token below an earlier grant',
      (h) => {
        h.acquire('a', 2, [0, 10]);
        h.release('a', 2, [20, 30]);
        h.acquire('b', 1, [40, 50]);
      },
      { operations: [1, 3], first: 3, says: /\(L6\)/ },
    ],
    [
      'a token below one that a Renew showed granted',
      (h) => {
        h.acquire('b', 2, [0, 10], lost);
        h.renew('b', 2, [20, 30]);
        h.acquire('a', 1, [40, 50]);
      },
      { operations: [2, 3], first: 3, says: /not above token 2, which Renew #2 \(b\) showed/ },
    ],
    [
      'concurrent grants no order of which fits',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.acquire('b', 2, [5, 15]);
      },
      // Placing a's grant first leaves b's stuck; that is the deeper dead end (b was sent later).
      { operations: [1, 2], first: 2, says: /\(L2\)/ },
    ],
    [
      'a Renew of a superseded lease',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.acquire('b', 2, [200, 210]);
        h.renew('a', 1, [220, 230]);
      },
      {
        operations: [2, 3],
        first: 3,
        says: /Renew #3 \(a\) renewed token 1 of a#1, but the latest grant was token 2 to b#1 \(Acquire #2 \(b\)\) \(L4\)/,
      },
    ],
    [
      'a Renew of a released lease',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.release('a', 1, [20, 30]);
        h.renew('a', 1, [40, 50]);
      },
      { operations: [2, 3], first: 3, says: /but Release #2 \(a\) had released it \(L4\)/ },
    ],
    [
      'a Release answered released=true for a superseded lease',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.acquire('b', 2, [200, 210]);
        h.release('a', 1, [220, 230]);
      },
      { operations: [2, 3], first: 3, says: /\(L5\)/ },
    ],
    [
      'an Acquire granted inside a lease that a slow Renew and a later-sent one extended',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.renew('a', 1, [60, 300]); // answered last; alone, valid until 160 at least
        h.renew('a', 1, [70, 80], answer('a', 1, 150)); // a longer TTL, so the two need not be taken in order
        // Whichever took effect last did so after 70: valid until 170 at least.
        h.acquire('b', 2, [150, 160]);
      },
      { operations: [3, 4], first: 4, says: /Renew #3 \(a\) made that lease valid for 100 ms.*answered 10 ms before/ },
    ],
    [
      'a grant that its replay showed made while another lease was valid',
      (h) => {
        h.acquire('b', 1, [0, 10]);
        h.acquire('a', 2, [20, 300], answer('a', 2, TTL), 'q'); // alone, it could have taken effect after 100
        h.acquire('a', 2, [40, 60], answer('a', 2, TTL, true), 'q');
      },
      { operations: [1, 2], first: 2, says: /and Acquire #3 \(a\) showed #2 granted 40 ms before that ran out \(L2\)/ },
    ],
    [
      'a violation after a legal stretch is found from the state that stretch ended in',
      (h) => {
        h.acquire('a', 1, [0, 10]);
        h.release('a', 1, [20, 30], lost); // took effect or not: both states go on
        h.renew('a', 1, [40, 50]); // only "not" fits; valid until 140
        h.acquire('b', 2, [60, 70]); // fits only if the release landed after the renew
        h.renew('a', 1, [200, 210]); // but then a's lease was released or superseded
      },
      { operations: [4, 5], first: 5, says: /Renew #5 \(a\).*\(L4\)/ },
    ],
  ];

  it.each(illegal)('catches %s', (_name, build, expected) => {
    const found = lock(build);
    expect(found.map((v) => ({ operations: v.operations, first: v.first }))).toEqual([
      { operations: expected.operations, first: expected.first },
    ]);
    expect(found[0]!.message).toMatch(/^r: /);
    expect(found[0]!.message).toMatch(expected.says);
  });

  it('reports the whole message of an overlapping grant', () => {
    expect(lock(illegal[0]![1]).map((v) => v.message)).toEqual([
      'r: Acquire #2 (b) was granted token 2 while a#1 held token 1: Acquire #1 (a) made that lease valid for 100 ms after it was sent, and #2 was answered 40 ms before that ran out (L2)',
    ]);
  });

  it('trusts the lease window only beyond clockUncertaintyMs', () => {
    const edge = (h: Leases) => {
      h.acquire('a', 1, [0, 10]);
      h.acquire('b', 2, [50, 99.5]);
    };
    expect(lock(edge)).toEqual([]);
    expect(lock(edge, { clockUncertaintyMs: 0 }).map((v) => v.first)).toEqual([2]);
  });

  it.each([
    ['a run without exclusive leases', { exclusiveLeases: false }],
    ['a partial check of a run under way', { partial: true }],
  ] as const)('judges only the token order in %s', (_name, options) => {
    const overlapping = illegal.find(([name]) => name.startsWith('an Acquire granted while'))![1];
    const renewed = illegal.find(([name]) => name === 'a Renew of a superseded lease')![1];
    const below = illegal.find(([name]) => name === 'a token below an earlier grant')![1];
    expect(lock(overlapping, options)).toEqual([]);
    expect(lock(renewed, options)).toEqual([]);
    expect(lock(below, options).map((v) => v.first)).toEqual([3]);
  });

  describe('with a coordinator clock that may run fast (L1)', () => {
    // A's TTL of 100 ran on the coordinator's clock; B was granted 40 ms later on the shared clock.
    const early = (h: Leases) => {
      h.acquire('a', 1, [0, 10]);
      h.acquire('b', 2, [30, 40]);
    };
    it.each([
      ['twice too fast: 50 ms at least', { maxRate: 2, aheadMs: 0 }, [2]],
      ['four times too fast: 25 ms at least', { maxRate: 4, aheadMs: 0 }, []],
      ['twice too fast and 40 ms ahead at once: 30 ms at least', { maxRate: 2, aheadMs: 40 }, []],
      ['slow only: the TTL at least', { maxRate: 0.5, aheadMs: 0 }, [2]],
    ] as const)(
      'counts a lease certainly valid for (TTL - aheadMs) / maxRate: %s',
      (_name, coordinatorClock, first) => {
        expect(lock(early).map((v) => v.first)).toEqual([2]);
        expect(lock(early, { coordinatorClock }).map((v) => v.first)).toEqual(first);
      },
    );

    it('shortens a renewal as it does a grant', () => {
      const renewed = (h: Leases) => {
        h.acquire('a', 1, [0, 10]);
        h.renew('a', 1, [20, 30]); // certainly valid until 45 at four times too fast
        h.acquire('b', 2, [40, 44]);
      };
      expect(lock(renewed, { coordinatorClock: { maxRate: 4, aheadMs: 0 } })).toEqual([]);
      expect(lock(renewed, { coordinatorClock: { maxRate: 2, aheadMs: 0 } }).map((v) => v.first)).toEqual([3]);
    });

    it.each([
      { maxRate: 0, aheadMs: 0 },
      { maxRate: 2, aheadMs: -1 },
      { maxRate: Number.NaN, aheadMs: 0 },
    ])('refuses %j as a bound', (coordinatorClock) => {
      expect(() => lock(early, { coordinatorClock })).toThrow(RangeError);
    });
  });

  it('says a stretch too large for its step budget is unchecked, and judges nothing after it', () => {
    const build = (h: Leases) => {
      h.acquire('a', 1, [0, 10]);
      h.renew('a', 1, [5, 20]);
      h.renew('a', 1, [6, 20]);
      h.acquire('b', 2, [50, 60]); // a violation in a later stretch
    };
    expect(lock(build).map((v) => v.first)).toEqual([4]);
    expect(checkHistory(history(build), { lockStepBudget: 3 })).toEqual({
      violations: [],
      unchecked: [
        {
          rule: 'LOCK',
          message: 'r: unchecked from Acquire #1 (a) on: 3 overlapping lease calls need more than 3 search steps',
          operations: [1],
        },
      ],
    });
  });

  it('leaves a resource unchecked, not accused, when one of its calls ended before it was sent', () => {
    // The soak's seed 1398913728: a fake-clock worker's Release mapped 9 ms after its own answer.
    // Left out, it made the next grant look like one over a valid lease (L2).
    const build = (h: Leases) => {
      h.acquire('c', 5, [0, 10]);
      h.renew('c', 5, [20, 30]);
      h.release('c', 5, [70, 61]);
      h.acquire('c', 6, [80, 90]);
    };
    expect(checkHistory(history(build))).toEqual({
      violations: [],
      unchecked: [
        {
          rule: 'LOCK',
          message: "r: unchecked: Release #3 (c) ended 9.0 ms before it was sent, so the history's clocks disagree",
          operations: [3],
        },
      ],
    });
  });

  it('takes the unknown Releases of one lease, retried through an outage, as one call', () => {
    const retried = (h: Leases) => {
      h.acquire('a', 1, [0, 10]); // valid until 100
      for (let i = 0; i < 16; i++) h.release('a', 1, [20 + i, 500], lost);
      h.acquire('b', 2, [60, 70]); // legal only if one of them took effect by 70
    };
    // One by one they would leave 2^16 sets of calls to search.
    expect(lock(retried, { lockStepBudget: 200 })).toEqual([]);
    expect(
      lock((h) => {
        h.acquire('a', 1, [0, 10]);
        for (let i = 0; i < 16; i++) h.release('a', 1, [75 + i, 500], lost); // all sent after b's grant
        h.acquire('b', 2, [60, 70]);
      }).map((v) => v.first),
    ).toEqual([18]);
  });

  describe('calls pipelined through a slow link, judged on a bound of search steps', () => {
    const rival: FaultPeriod = { name: 'split-brain', target: 'coordinator-2', startMs: 0, endMs: 10 };
    // c's calls take 600 ms to be answered, a's and b's 10. Near the rival,
    // c's grant holds no lease in the model, and c's renewals and release
    // only show token 1 granted (witnesses), all in flight at once.
    const slowAroundRival =
      ({ replayed = false, released = true } = {}) =>
      (h: Leases) => {
        if (replayed) {
          h.acquire('c', 1, [20, 620], lost, 'q');
          h.acquire('c', 1, [30, 630], answer('c', 1, TTL, true), 'q');
        } else h.acquire('c', 1, [20, 620]);
        for (let i = 0; i < 10; i++) h.renew('c', 1, [40 + 30 * i, 640 + 30 * i]);
        h.release('c', 1, [340, 940]);
        for (let j = 0; j < 4; j++) {
          const t = 150 + 120 * j;
          h.acquire('a', 2 + j, [t, t + 10]);
          h.renew('a', 2 + j, [t + 30, t + 40]);
          if (released || j < 3) h.release('a', 2 + j, [t + 60, t + 70]);
        }
        h.acquire('b', 6, [560, 570]); // inside a's last lease unless it was released
      };
    const judged = (build: (h: Leases) => void, lockStepBudget: number) => {
      const { violations, unchecked } = checkHistory(history(build, [rival]), { lockStepBudget });
      return { violations: violations.map((v) => [v.rule, v.first]), unchecked };
    };

    it('folds the witnesses of a certain grant into it', () => {
      // 25 calls in one stretch: 255,330 steps in every order of the
      // witnesses; 28 once they are folded into c's grant.
      expect(judged(slowAroundRival(), 50)).toEqual({ violations: [], unchecked: [] });
      expect(judged(slowAroundRival({ released: false }), 50)).toEqual({ violations: [['LOCK', 24]], unchecked: [] });
    });

    it('places a witness of a token already shown at once', () => {
      // c's grant only may have happened (a replay revealed it), so its
      // witnesses stay: 275,521 steps in every order; 72 placing each
      // as soon as it changes nothing.
      expect(judged(slowAroundRival({ replayed: true }), 200)).toEqual({ violations: [], unchecked: [] });
    });

    it('takes the renewals of one lease in their order of sending', () => {
      // Two leases, each renewed ten times while the answers take 300 ms:
      // 152,014 steps in every order; 166 in the order of sending.
      const pipelined = (h: Leases) => {
        let t = 0;
        for (let token = 1; token <= 2; token++, t += 10) {
          h.acquire('a', token, [t, t + 300]);
          for (let i = 0; i < 10; i++, t += 30) h.renew('a', token, [t + 10, t + 310]);
          h.release('a', token, [t + 10, t + 310]);
        }
      };
      expect(checkHistory(history(pipelined), { lockStepBudget: 500 })).toEqual({ violations: [], unchecked: [] });
    });
  });

  it('checks a long history of renewed leases and refused rivals in short stretches', () => {
    const found = lock(
      (h) => {
        // Four workers in turn; each lease is renewed while a rival's Acquire is refused, then released or left to expire.
        for (let token = 1; token <= 2_000; token++) {
          const [owner, rival, t] = [`w${token % 4}`, `w${(token + 1) % 4}`, token * 300];
          const receiptLost = token % 7 === 0;
          h.acquire(owner, token, [t, t + 20], receiptLost ? lost : answer(owner, token, TTL), `q${token}`);
          if (receiptLost) h.acquire(owner, token, [t + 25, t + 30], answer(owner, token, TTL, true), `q${token}`);
          h.acquire(rival, token + 1, [t + 10, t + 40], held);
          h.renew(owner, token, [t + 40, t + 70]);
          if (token % 3 === 0) h.release(owner, token, [t + 80, t + 95], token % 2 === 0 ? lost : released(true));
        }
      },
      { lockStepBudget: 50 },
    );
    // Nothing unchecked either, on a budget of 50 steps a stretch: the
    // search splits it at its quiet moments into 2,000 short stretches.
    expect(found).toEqual([]);
  });

  describe('around a wiped coordinator or a rival (unshared periods)', () => {
    // With TTL 100 and the default 1 ms uncertainty, a period [50, 60] relaxes L2, L4 and L5 over [49, 161].
    const wipe: FaultPeriod = { name: 'crash-wipe', target: 'coordinator', startMs: 50, endMs: 60 };
    const rival: FaultPeriod = { name: 'split-brain', target: 'coordinator-2', startMs: 50, endMs: 60 };
    const found = (build: (h: Leases) => void, faults: readonly FaultPeriod[]) =>
      checked(build, {}, faults).map((v) => [v.rule, v.first ?? v.operations]);

    it('S2: a request id sent before a wipe and answered after it by a fresh token passes (R1 records were lost)', () => {
      const reacquired = (h: Leases) => {
        h.acquire('a', 1, [0, 10], answer('a', 1, TTL), 'q');
        h.acquire('a', 2, [120, 130], answer('a', 2, TTL), 'q');
      };
      expect(found(reacquired, [wipe])).toEqual([]);
      expect(found(reacquired, [rival])).toEqual([]);
      // The same history outside any unshared period breaks S2; a crash that kept the data is none.
      expect(found(reacquired, [])).toEqual([['S2', [1, 2]]]);
      expect(found(reacquired, [{ ...wipe, name: 'crash' }])).toEqual([['S2', [1, 2]]]);
      expect(found(reacquired, [{ ...wipe, target: 'sink' }])).toEqual([['S2', [1, 2]]]);
      expect(found(reacquired, [{ ...wipe, startMs: 140, endMs: 150 }])).toEqual([['S2', [1, 2]]]);
    });

    it('S2: a request id that yields two tokens after the wipe is still a violation', () => {
      const twiceAfter = (h: Leases) => {
        h.acquire('a', 1, [0, 10], answer('a', 1, TTL), 'q');
        h.acquire('a', 2, [120, 130], answer('a', 2, TTL), 'q');
        h.acquire('a', 3, [300, 310], answer('a', 3, TTL), 'q');
      };
      expect(found(twiceAfter, [wipe])).toEqual([['S2', [1, 2, 3]]]);
    });

    it('L2: a grant over a lease the wiped coordinator forgot passes within a TTL of the period', () => {
      const takeover = (h: Leases) => {
        h.acquire('a', 1, [0, 10]); // valid until 100
        h.acquire('b', 2, [70, 80]);
      };
      expect(found(takeover, [])).toEqual([['LOCK', 2]]);
      expect(found(takeover, [wipe])).toEqual([]);
      expect(found(takeover, [rival])).toEqual([]);
    });

    it('L2: a double grant outside the relaxed window is still caught', () => {
      const later = (h: Leases) => {
        h.acquire('a', 1, [0, 10]);
        h.acquire('b', 2, [70, 80]); // relaxed
        h.acquire('c', 3, [300, 310]);
        h.acquire('d', 4, [350, 360]); // c's lease was valid until 400
      };
      const [violation] = checked(later, {}, [wipe]);
      expect([violation?.rule, violation?.first]).toEqual(['LOCK', 4]);
      expect(violation?.message).toMatch(/Acquire #4 \(d\) was granted token 4 while c#1 held token 3.*\(L2\)/);
    });

    it('L6: tokens must still rise inside the window (the sink’s fence orders every grant)', () => {
      const below = (h: Leases) => {
        h.acquire('a', 2, [0, 10]);
        h.acquire('b', 1, [70, 80]);
      };
      expect(found(below, [wipe, rival])).toEqual([['LOCK', 2]]);
    });

    it('L4: the holder that kept renewing with its own coordinator across a rival passes', () => {
      const renewing = (h: Leases) => {
        h.acquire('a', 1, [0, 10]);
        h.acquire('b', 2, [55, 58]); // granted by the rival
        h.renew('a', 1, [80, 90]);
        h.renew('a', 1, [170, 180]); // past the window: its own coordinator still holds a's lease as the latest
        h.release('a', 1, [250, 260]);
      };
      // Without the rival in the history, b's grant breaks L2 (and a's renewals L4).
      expect(found(renewing, [])).toEqual([['LOCK', 2]]);
      expect(found(renewing, [rival])).toEqual([]);
    });

    it('L2: a lease granted in the window and released after it frees the resource', () => {
      const released = (h: Leases) => {
        h.acquire('a', 1, [0, 10]);
        h.acquire('b', 2, [150, 155]); // in the window: holds no lease in the model
        h.release('b', 2, [170, 175]); // so its release is not followed either
        h.acquire('c', 3, [180, 190]);
      };
      expect(found(released, [wipe])).toEqual([]);
    });

    it('L4: judged again for grants made after the window', () => {
      const superseded = (h: Leases) => {
        h.acquire('a', 1, [0, 10]);
        h.acquire('c', 3, [300, 310]);
        h.acquire('d', 4, [500, 510]);
        h.renew('c', 3, [520, 530]);
      };
      expect(found(superseded, [wipe])).toEqual([['LOCK', 4]]);
    });

    it('a period still on at the end of the history lasts to its end', () => {
      const open = (h: Leases) => {
        h.acquire('a', 1, [0, 10]);
        h.acquire('b', 2, [500, 510], answer('b', 2, TTL), 'a-1');
      };
      expect(found(open, [{ name: 'split-brain', target: 'coordinator-2', startMs: 5 }])).toEqual([]);
    });
  });
});
