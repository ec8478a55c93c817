import { CoalescingBatcher } from './coalescing-batcher';

/** A batch function whose calls stay open until the test releases them. */
function controllableBatches() {
  const calls: { items: number[]; release(): void; fail(err: Error): void }[] = [];
  const run = (items: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({
        items,
        release: () => resolve(items.map((i) => `r${i}`)),
        fail: reject,
      });
    });
  return { calls, run };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));
/** The end of the current synchronous stretch, when what it submitted goes out. */
const tick = () => Promise.resolve();

describe('CoalescingBatcher', () => {
  it('sends an item at once when nothing is in flight', async () => {
    const { calls, run } = controllableBatches();
    const batcher = new CoalescingBatcher(run, { maxBatch: 10, maxInFlight: 1 });
    const answer = batcher.submit(1);
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1]]);
    calls[0].release();
    await expect(answer).resolves.toBe('r1');
  });

  it('sends the items submitted together in one batch, in order', async () => {
    const { calls, run } = controllableBatches();
    const batcher = new CoalescingBatcher(run, { maxBatch: 10, maxInFlight: 2 });
    const answers = [1, 2, 3].map((i) => batcher.submit(i));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1, 2, 3]]);
    calls[0].release();
    await expect(Promise.all(answers)).resolves.toEqual(['r1', 'r2', 'r3']);
  });

  it('groups the items that queued while a batch was in flight, in order', async () => {
    const { calls, run } = controllableBatches();
    const batcher = new CoalescingBatcher(run, { maxBatch: 10, maxInFlight: 1 });
    const first = batcher.submit(1);
    await tick();
    const answers = [2, 3, 4].map((i) => batcher.submit(i));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1]]);
    calls[0].release();
    await flush();
    expect(calls.map((c) => c.items)).toEqual([[1], [2, 3, 4]]);
    calls[1].release();
    await expect(Promise.all([first, ...answers])).resolves.toEqual(['r1', 'r2', 'r3', 'r4']);
  });

  it('ends a batch before the item that would take it over maxWeight; a heavier item goes alone', async () => {
    const { calls, run } = controllableBatches();
    const batcher = new CoalescingBatcher(run, {
      maxBatch: 10,
      maxInFlight: 1,
      maxWeight: 10,
      weightOf: (item: number) => item,
    });
    const answers = [4, 5, 2, 12, 3].map((i) => batcher.submit(i));
    await tick();
    for (let n = 0; n < 4; n++) {
      calls[n].release();
      await flush();
    }
    expect(calls.map((c) => c.items)).toEqual([[4, 5], [2], [12], [3]]);
    await expect(Promise.all(answers)).resolves.toEqual(['r4', 'r5', 'r2', 'r12', 'r3']);
  });

  it('respects maxInFlight and maxBatch', async () => {
    const { calls, run } = controllableBatches();
    const batcher = new CoalescingBatcher(run, { maxBatch: 2, maxInFlight: 2 });
    const answers = [1, 2, 3, 4, 5, 6, 7].map((i) => batcher.submit(i));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    calls[0].release();
    await flush();
    expect(calls.map((c) => c.items)).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    calls[1].release();
    calls[2].release();
    await flush();
    expect(calls.map((c) => c.items)).toEqual([[1, 2], [3, 4], [5, 6], [7]]);
    calls[3].release();
    await expect(Promise.all(answers)).resolves.toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
  });

  it('fails every item of a failed batch and keeps serving later ones', async () => {
    const { calls, run } = controllableBatches();
    const batcher = new CoalescingBatcher(run, { maxBatch: 10, maxInFlight: 1 });
    const first = batcher.submit(1);
    await tick();
    const queued = [batcher.submit(2), batcher.submit(3)];
    calls[0].fail(new Error('database down'));
    await expect(first).rejects.toThrow('database down');
    await flush();
    calls[1].fail(new Error('still down'));
    for (const q of queued) await expect(q).rejects.toThrow('still down');
    const later = batcher.submit(4);
    await tick();
    calls[2].release();
    await expect(later).resolves.toBe('r4');
  });

  it('rejects the batch when the batch function answers the wrong number of items', async () => {
    const batcher = new CoalescingBatcher(() => Promise.resolve(['only one', 'extra']), {
      maxBatch: 10,
      maxInFlight: 1,
    });
    await expect(batcher.submit(1)).rejects.toThrow('a batch of 1 got 2 results');
  });
});
