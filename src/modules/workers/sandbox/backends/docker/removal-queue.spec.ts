import { BurstGate } from './burst-gate';
import { RemovalQueue } from './removal-queue';

/** A removal that ends when the test says so. */
function pendingRemoval(): { remove: () => Promise<void>; started: boolean; end: () => void } {
  let end: () => void = () => undefined;
  const removal = {
    started: false,
    end: () => end(),
    remove: () => {
      removal.started = true;
      return new Promise<void>((resolve) => (end = resolve));
    },
  };
  return removal;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A gate that never sees a burst. */
const open = () => new BurstGate({ size: Infinity, windowMs: 0, pollMs: 0 });

describe('RemovalQueue', () => {
  it('runs a few removals at a time, in order, and flushes once all are done', async () => {
    const queue = new RemovalQueue(open(), 2);
    const removals = Array.from({ length: 4 }, pendingRemoval);
    for (const removal of removals) queue.add(removal.remove);
    expect(removals.map((r) => r.started)).toEqual([true, true, false, false]);
    let flushed = false;
    void queue.flush().then(() => (flushed = true));

    removals[1].end();
    await tick();
    expect(removals.map((r) => r.started)).toEqual([true, true, true, false]);
    removals[0].end();
    removals[2].end();
    await tick();
    expect(removals[3].started).toBe(true);
    expect(flushed).toBe(false);
    expect(queue.pending).toBe(1);
    removals[3].end();
    await tick();
    expect(flushed).toBe(true);
    expect(queue.pending).toBe(0);
  });

  it('goes on after a removal that fails', async () => {
    const queue = new RemovalQueue(open(), 1);
    const done: string[] = [];
    queue.add(() => Promise.reject(new Error('the daemon does not answer')));
    queue.add(() => {
      done.push('second');
      return Promise.resolve();
    });
    await queue.flush();
    expect(done).toEqual(['second']);
  });

  it('frees the place of a removal the daemon never answers', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    try {
      const queue = new RemovalQueue(open(), 1, Date.now, 1000);
      const hung = pendingRemoval();
      const next = pendingRemoval();
      queue.add(hung.remove);
      queue.add(next.remove);
      await tick();
      expect(next.started).toBe(false);
      jest.advanceTimersByTime(999);
      await tick();
      expect(next.started).toBe(false);
      jest.advanceTimersByTime(1);
      await tick();
      expect(next.started).toBe(true);
      next.end();
      await expect(queue.flush()).resolves.toBeUndefined();
    } finally {
      jest.useRealTimers();
    }
  });

  it('is flushed at once when nothing is queued', async () => {
    await expect(new RemovalQueue().flush()).resolves.toBeUndefined();
  });

  describe('while a burst of sandboxes is in progress', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    const burstGate = () => new BurstGate({ size: 2, windowMs: 10_000, pollMs: 250 });

    it('waits until it is over, or does it at once when flushed', async () => {
      const gate = burstGate();
      const queue = new RemovalQueue(gate, 2);
      const removed: number[] = [];
      const closes = [gate.opened(), gate.opened()];
      queue.add(async () => void removed.push(1));
      await jest.advanceTimersByTimeAsync(1000);
      expect(removed).toEqual([]);
      closes[0]();
      await jest.advanceTimersByTimeAsync(250);
      expect(removed).toEqual([1]);

      closes.push(gate.opened());
      queue.add(async () => void removed.push(2));
      await jest.advanceTimersByTimeAsync(0);
      expect(removed).toEqual([1]);
      await queue.flush();
      expect(removed).toEqual([1, 2]);
    });

    it('waits 10 s at most', async () => {
      const gate = burstGate();
      const queue = new RemovalQueue(gate, 2);
      const removed: number[] = [];
      gate.opened();
      gate.opened();
      queue.add(async () => void removed.push(1));
      await jest.advanceTimersByTimeAsync(9_999);
      // Still within the window: the burst's sandboxes are open, and new ones come.
      gate.opened();
      expect(removed).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      expect(removed).toEqual([1]);
    });

    it('does one added `now` at once, before those that wait', async () => {
      const gate = burstGate();
      const queue = new RemovalQueue(gate, 2);
      const removed: string[] = [];
      const closes = [gate.opened(), gate.opened()];
      queue.add(async () => void removed.push('waits'));
      queue.add(async () => void removed.push('now'), true);
      await jest.advanceTimersByTimeAsync(0);
      expect(removed).toEqual(['now']);
      closes.forEach((closed) => closed());
      await jest.advanceTimersByTimeAsync(250);
      expect(removed).toEqual(['now', 'waits']);
    });
  });
});
