import { once } from 'node:events';
import { DockerWarmPool } from './docker-warm-pool';
import { BurstGate } from './burst-gate';
import { WarmPoolSizing } from './warm-pool-sizing';

const IMAGE = 'ambient-agent:bookworm';

/**
 * A pool whose containers are numbered items; `made` and `discarded` tell what it did, and items
 * put in `gone` are no longer alive (removed behind the pool's back).
 */
function poolOf(size: number, max: number, make?: (image: string) => Promise<number>) {
  let next = 0;
  const made: number[] = [];
  const discarded: number[] = [];
  const gone = new Set<number>();
  let clock = Date.now();
  const gate = new BurstGate({ size: 3, windowMs: 10_000, pollMs: 250 }, () => clock);
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
    (item) => !gone.has(item),
    () => clock,
    gate,
  );
  return {
    pool,
    gate,
    made,
    discarded,
    gone,
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

  it('discards the ready containers that are gone, hands out a live one and refills', async () => {
    const { pool, discarded, gone } = poolOf(3, 3);
    pool.start();
    await filled(pool, 3);
    gone.add(1).add(2);
    expect(pool.take(IMAGE)).toBe(3);
    expect(discarded).toEqual([1, 2]);
    await filled(pool, 3);
    for (const item of [4, 5, 6]) gone.add(item);
    expect(pool.take(IMAGE)).toBeNull();
    await pool.drain();
  });

  describe('with containers removed behind its back', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('replaces them at its periodic look, before anyone asks for one', async () => {
      const { pool, discarded, gone } = poolOf(2, 2);
      pool.start();
      await jest.advanceTimersByTimeAsync(0);
      expect(pool.readyCount(IMAGE)).toBe(2);
      gone.add(1).add(2);
      await jest.advanceTimersByTimeAsync(30_000);
      expect(discarded).toEqual([1, 2]);
      expect(pool.readyCount(IMAGE)).toBe(2);
      expect(pool.take(IMAGE)).toBe(3);
      await pool.drain();
    });

    it('holds none that was removed while being made: it says so and makes another', async () => {
      let n = 0;
      const under = poolOf(2, 2, () => {
        const item = ++n;
        if (item === 2) under.gone.add(item); // removed before its make returned
        return Promise.resolve(item);
      });
      const { pool, discarded, advance } = under;
      const failed = once(pool, 'failed');
      pool.start();
      const [, error] = (await failed) as [string, Error];
      expect(error.message).toBe('the container was gone before it was ready');
      expect(discarded).toEqual([2]);
      expect(pool.readyCount(IMAGE)).toBe(1);
      advance(5000);
      await jest.advanceTimersByTimeAsync(5000);
      expect(pool.readyCount(IMAGE)).toBe(2);
      expect([pool.take(IMAGE), pool.take(IMAGE)]).toEqual([1, 3]);
      await pool.drain();
    });
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

  it('removes what it holds at once and what it is making once made when drained, and makes no more', async () => {
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
    // A make the daemon is slow to answer does not hold up the removal of the ready ones.
    await new Promise((r) => setImmediate(r));
    expect(discarded).toEqual([1]);
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

  describe('with containers given back by their sandboxes', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('hands a given-back container out again, and a steady stream of runs makes and removes none', async () => {
      const { pool, made, discarded, advance } = poolOf(2, 4);
      pool.start();
      await jest.advanceTimersByTimeAsync(0);
      // The first run's take makes one in its place; after that each run takes what the last gave
      // back. One run every 5 s, through two periodic looks.
      let running = pool.take(IMAGE)!;
      await jest.advanceTimersByTimeAsync(0);
      for (let run = 0; run < 12; run++) {
        advance(5000);
        await jest.advanceTimersByTimeAsync(5000);
        await pool.giveBack(IMAGE, running);
        running = pool.take(IMAGE)!;
      }
      const filledAgain = once(pool, 'filled');
      await pool.giveBack(IMAGE, running);
      // Full again (3 ready, its target 2): says so, as when it made them.
      expect(await filledAgain).toEqual([IMAGE, 3]);
      expect(made).toEqual([1, 2, 3]);
      expect(discarded).toEqual([]);
      expect(pool.readyCount(IMAGE)).toBe(3);
      await pool.drain();
    });

    it('makes none in place of containers out to come back while the pool is at its most', async () => {
      // Runs 200 ms apart: demand keeps the target at the pool's most (2), where a container made
      // at each hand-out was one too many once the run's came back (made, then removed).
      const { pool, made, discarded, advance } = poolOf(1, 2);
      pool.start();
      await jest.advanceTimersByTimeAsync(0);
      for (let run = 0; run < 12; run++) {
        const running = pool.take(IMAGE, () => true)!;
        expect(running).not.toBeNull();
        await jest.advanceTimersByTimeAsync(0);
        advance(200);
        await jest.advanceTimersByTimeAsync(200);
        expect(await pool.giveBack(IMAGE, running)).toBe(true);
        await jest.advanceTimersByTimeAsync(0);
      }
      // The first fill, and the second of the most once demand rose: nothing since.
      expect(made).toEqual([1, 2]);
      expect(discarded).toEqual([]);
      await pool.drain();
    });

    it('still makes one in place of a container out to come back where there is room for both', async () => {
      const { pool, made } = poolOf(2, 4);
      pool.start();
      await jest.advanceTimersByTimeAsync(0);
      pool.take(IMAGE, () => true);
      await jest.advanceTimersByTimeAsync(0);
      expect(made).toEqual([1, 2, 3]);
      expect(pool.readyCount(IMAGE)).toBe(2);
      await pool.drain();
    });

    it('makes one in place of a container that will not come back, or that stays out past its look', async () => {
      // At its most: a container made while one is out would be one too many at its return.
      const { pool, made, advance } = poolOf(2, 2);
      pool.start();
      await jest.advanceTimersByTimeAsync(0);
      expect(made).toEqual([1, 2]);
      const removed = pool.take(IMAGE, () => true)!;
      await jest.advanceTimersByTimeAsync(0);
      expect(made).toEqual([1, 2]);
      // Its sandbox's container was removed instead of given back.
      pool.settle(IMAGE, removed);
      await jest.advanceTimersByTimeAsync(0);
      expect(made).toEqual([1, 2, 3]);
      // A long run: at the periodic look after the loan stops counting, one is made in its place.
      pool.take(IMAGE, () => true);
      await jest.advanceTimersByTimeAsync(0);
      expect(made).toEqual([1, 2, 3]);
      advance(30_000);
      await jest.advanceTimersByTimeAsync(30_000);
      expect(made).toEqual([1, 2, 3, 4]);
      await pool.drain();
    });

    it("settles the loan of the container that ended, not an older one's", async () => {
      const { pool, made, advance } = poolOf(2, 2);
      pool.start();
      await jest.advanceTimersByTimeAsync(0);
      // A long run: its loan stops counting, and one is made in its place at the look.
      pool.take(IMAGE, () => true);
      advance(30_000);
      await jest.advanceTimersByTimeAsync(30_000);
      expect(made).toEqual([1, 2, 3]);
      // Another's hand-out fails: the place its container kept is made up for at once, although
      // the long run's older loan is still out.
      const failed = pool.take(IMAGE, () => true)!;
      await jest.advanceTimersByTimeAsync(0);
      expect(made).toEqual([1, 2, 3]);
      pool.settle(IMAGE, failed);
      await jest.advanceTimersByTimeAsync(0);
      expect(made).toEqual([1, 2, 3, 4]);
      await pool.drain();
    });

    it('gives up, at its periodic looks, those above the target that no hand-out needed', async () => {
      const { pool, discarded, advance } = poolOf(1, 4);
      pool.start();
      await jest.advanceTimersByTimeAsync(0);
      const taken = [pool.take(IMAGE)!, pool.take(IMAGE), pool.take(IMAGE)];
      await jest.advanceTimersByTimeAsync(0);
      for (const item of taken) if (item !== null) await pool.giveBack(IMAGE, item);
      expect(pool.readyCount(IMAGE)).toBeGreaterThan(1);
      // The burst is remembered for a minute (historyMs), then forgotten: down to its size, 1.
      for (let look = 0; look < 3; look++) {
        advance(30_000);
        await jest.advanceTimersByTimeAsync(30_000);
      }
      expect(pool.readyCount(IMAGE)).toBe(1);
      expect(discarded.length).toBeGreaterThan(0);
      await pool.drain();
    });

    it('discards a container it finishes making once given-back ones filled it to its most', async () => {
      let finish: () => void = () => undefined;
      let n = 0;
      const { pool, discarded } = poolOf(1, 2, async () => {
        const item = ++n;
        if (item > 1) await new Promise<void>((resolve) => (finish = resolve));
        return item;
      });
      pool.start();
      await jest.advanceTimersByTimeAsync(0);
      pool.take(IMAGE); // item 1; item 2 is being made in its place
      await pool.giveBack(IMAGE, 1);
      await pool.giveBack(IMAGE, 100);
      finish();
      await jest.advanceTimersByTimeAsync(0);
      expect(discarded).toEqual([2]);
      expect(pool.readyCount(IMAGE)).toBe(2);
      await pool.drain();
    });

    it('discards one given back above its most, while it drains, or once gone', async () => {
      const { pool, discarded, gone } = poolOf(2, 2);
      pool.start();
      await jest.advanceTimersByTimeAsync(0);
      await pool.giveBack(IMAGE, 100);
      gone.add(101);
      pool.take(IMAGE);
      await pool.giveBack(IMAGE, 101);
      expect(discarded).toEqual([100, 101]);
      await pool.drain();
      await pool.giveBack(IMAGE, 102);
      await jest.advanceTimersByTimeAsync(0);
      expect(discarded).toContain(102);
    });
  });

  describe('while a burst of sandboxes is in progress', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    /** Lets the makes and hand-outs the pool started settle (no time passes). */
    const settle = () => jest.advanceTimersByTimeAsync(0);

    /** A pool whose makes after the first `size` end when the test says so. */
    function slowPool(size: number) {
      const finish: (() => void)[] = [];
      let n = 0;
      const under = poolOf(size, size, async () => {
        const item = ++n;
        if (item > size) await new Promise<void>((resolve) => finish.push(resolve));
        return item;
      });
      return { ...under, finish, made: () => n };
    }

    it('keeps one ready while it lasts, then replaces the rest four at a time', async () => {
      const { pool, gate, finish, made } = slowPool(6);
      pool.start();
      await settle();
      expect(made()).toBe(6);
      // Six sandboxes opened at once (the gate's burst is three), each taking a container.
      const closes = Array.from({ length: 6 }, () => gate.opened());
      for (let i = 0; i < 5; i++) expect(pool.take(IMAGE)).not.toBeNull();
      await settle();
      // One still ready: nothing is made.
      expect(made()).toBe(6);
      expect(pool.take(IMAGE)).not.toBeNull();
      await settle();
      expect(made()).toBe(7);
      finish.shift()!();
      await settle();
      // One ready again: the next one waits.
      expect(pool.readyCount(IMAGE)).toBe(1);
      expect(made()).toBe(7);
      await jest.advanceTimersByTimeAsync(1000);
      expect(made()).toBe(7);
      for (const closed of closes) closed();
      await jest.advanceTimersByTimeAsync(250);
      // Over: four at a time.
      expect(made()).toBe(11);
      finish.splice(0).forEach((done) => done());
      await settle();
      expect(made()).toBe(12);
      finish.splice(0).forEach((done) => done());
      await settle();
      expect(pool.readyCount(IMAGE)).toBe(6);
      await pool.drain();
    });

    it('replaces containers four at a time for sandboxes opened one after another', async () => {
      const { pool, gate, finish, made } = slowPool(6);
      pool.start();
      await settle();
      for (let i = 0; i < 6; i++) {
        const closed = gate.opened();
        pool.take(IMAGE);
        closed();
      }
      await settle();
      expect(made()).toBe(10);
      finish.splice(0).forEach((done) => done());
      await settle();
      finish.splice(0).forEach((done) => done());
      await pool.drain();
    });
  });
});
