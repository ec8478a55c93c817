import { once } from 'node:events';
import { DockerWarmPool } from './docker-warm-pool';
import { QuietGate, type QuietTiming } from './quiet-gate';
import { WarmPoolSizing } from './warm-pool-sizing';

const IMAGE = 'ambient-agent:bookworm';

/** Replaces what was taken at once (the deferral has tests of its own). */
const REFILL_AT_ONCE: QuietTiming = { quietMs: 0, maxDeferMs: 0 };

/** A pool whose containers are numbered items; `made` and `discarded` tell what it did. */
function poolOf(
  size: number,
  max: number,
  make?: (image: string) => Promise<number>,
  refill = REFILL_AT_ONCE,
) {
  let next = 0;
  const made: number[] = [];
  const discarded: number[] = [];
  let clock = Date.now();
  const pool = new DockerWarmPool<number>(
    new WarmPoolSizing({ size, max, burstWindowMs: 1000, historyMs: 60_000 }, IMAGE),
    make ??
      (() => {
        const item = ++next;
        made.push(item);
        return Promise.resolve(item);
      }),
    (item) => {
      discarded.push(item);
      return Promise.resolve();
    },
    () => clock,
    new QuietGate(refill, () => clock),
  );
  return {
    pool,
    made,
    discarded,
    advance: (ms: number) => (clock += ms),
  };
}

async function filled(pool: DockerWarmPool<number>, ready: number): Promise<void> {
  while (pool.readyCount(IMAGE) < ready) await once(pool, 'filled');
}

describe('DockerWarmPool', () => {
  it('fills to its size at start and hands each container out once', async () => {
    const { pool, made } = poolOf(2, 4);
    pool.start();
    await filled(pool, 2);
    const first = pool.take(IMAGE);
    const second = pool.take(IMAGE);
    expect([first, second].sort()).toEqual([1, 2]);
    expect(made.slice(0, 2)).toEqual([1, 2]);
    // Never handed out again: fresh containers replace them.
    await filled(pool, 2);
    const third = pool.take(IMAGE);
    expect([1, 2]).not.toContain(third);
    await pool.drain();
  });

  it('returns null at once when nothing is ready, and grows after the burst', async () => {
    const { pool } = poolOf(1, 5);
    pool.start();
    await filled(pool, 1);
    const burst = Array.from({ length: 4 }, () => pool.take(IMAGE));
    expect(burst.filter((item) => item === null)).toHaveLength(3);
    await filled(pool, 4);
    expect(pool.readyCount(IMAGE)).toBe(4);
    await pool.drain();
  });

  it('makes nothing when its size is 0', () => {
    const { pool, made } = poolOf(0, 5);
    pool.start();
    expect(pool.take(IMAGE)).toBeNull();
    expect(made).toEqual([]);
  });

  it('removes what it holds and what it is making when drained, and makes no more', async () => {
    let release: () => void = () => undefined;
    const slow = new Promise<void>((resolveSlow) => (release = resolveSlow));
    let n = 0;
    const { pool, discarded } = poolOf(2, 2, async () => {
      const item = ++n;
      if (item === 2) await slow;
      return item;
    });
    pool.start();
    while (pool.readyCount(IMAGE) < 1) await new Promise((r) => setImmediate(r));
    const draining = pool.drain();
    release();
    await draining;
    expect(discarded.sort()).toEqual([1, 2]);
    expect(pool.readyCount(IMAGE)).toBe(0);
    expect(pool.take(IMAGE)).toBeNull();
    expect(n).toBe(2);
  });

  it('says when a container cannot be made and pauses that image', async () => {
    let attempts = 0;
    const { pool } = poolOf(1, 1, () => {
      attempts++;
      return Promise.reject(new Error('No such image'));
    });
    const failed = once(pool, 'failed');
    pool.start();
    const [image, error] = (await failed) as [string, Error];
    expect(image).toBe(IMAGE);
    expect(error.message).toBe('No such image');
    // Paused: a hand-out does not make it try again at once.
    expect(pool.take(IMAGE)).toBeNull();
    expect(attempts).toBe(1);
    await pool.drain();
  });

  it('gives up containers above a shrunken target once the burst is forgotten', async () => {
    const { pool, discarded, advance } = poolOf(1, 4);
    pool.start();
    await filled(pool, 1);
    for (let i = 0; i < 3; i++) pool.take(IMAGE);
    await filled(pool, 3);
    advance(61_000);
    pool.take(IMAGE);
    expect(pool.readyCount(IMAGE)).toBe(1);
    expect(discarded).toHaveLength(1);
    await pool.drain();
  });

  describe('while containers are being taken', () => {
    const refill: QuietTiming = { quietMs: 1000, maxDeferMs: 5000 };

    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    /** Lets the makes and hand-outs the pool started settle (no time passes). */
    const settle = () => jest.advanceTimersByTimeAsync(0);

    it('replaces nothing until none was taken for a while, then all of it', async () => {
      const { pool, made, advance } = poolOf(3, 3, undefined, refill);
      pool.start();
      await settle();
      expect(made).toEqual([1, 2, 3]);
      for (let i = 0; i < 3; i++) {
        expect(pool.take(IMAGE)).not.toBeNull();
        advance(600);
        await jest.advanceTimersByTimeAsync(600);
      }
      // 600 ms after the last take: the burst may go on.
      expect(made).toEqual([1, 2, 3]);
      advance(400);
      await jest.advanceTimersByTimeAsync(400);
      expect(made).toEqual([1, 2, 3, 4, 5, 6]);
      expect(pool.readyCount(IMAGE)).toBe(3);
      await pool.drain();
    });

    it('replaces what was taken after the longest deferral, however steady the takes', async () => {
      const { pool, made, advance } = poolOf(20, 20, undefined, refill);
      pool.start();
      await settle();
      expect(made).toHaveLength(20);
      // One take every 500 ms: never quiet for 1 s.
      for (let i = 0; i < 10; i++) {
        pool.take(IMAGE);
        advance(500);
        await jest.advanceTimersByTimeAsync(500);
      }
      // 5 s after the first take the pool makes the 10 taken, though takes go on…
      expect(made).toHaveLength(30);
      // …and the next take waits again.
      pool.take(IMAGE);
      await settle();
      expect(made).toHaveLength(30);
      await pool.drain();
    });
  });
});
