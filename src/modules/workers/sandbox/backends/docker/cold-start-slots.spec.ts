import { ColdStartSlots } from './cold-start-slots';

describe('ColdStartSlots', () => {
  it('lets `limit` start at once and hands each freed slot to the longest waiting, in order', async () => {
    const slots = new ColdStartSlots(2);
    const order: number[] = [];
    const releases = new Map<number, () => void>();
    const asks = [1, 2, 3, 4, 5].map((n) =>
      slots.acquire().then((release) => {
        order.push(n);
        releases.set(n, release);
      }),
    );
    await Promise.resolve();
    await Promise.all(asks.slice(0, 2));
    expect(order).toEqual([1, 2]);
    expect(slots.queued).toBe(3);

    releases.get(2)!();
    releases.get(2)!(); // a second release of the same slot frees nothing more
    await asks[2];
    await Promise.resolve();
    expect(order).toEqual([1, 2, 3]);
    expect(slots.queued).toBe(2);

    releases.get(1)!();
    releases.get(3)!();
    await Promise.all(asks.slice(3));
    expect(order).toEqual([1, 2, 3, 4, 5]);

    // All released: the next one starts at once.
    releases.get(4)!();
    releases.get(5)!();
    const started = await Promise.race([
      slots.acquire().then(() => 'started'),
      new Promise((resolve) => setImmediate(() => resolve('waiting'))),
    ]);
    expect(started).toBe('started');
  });
});
