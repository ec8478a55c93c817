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

  it('lets a waiter whose signal aborts leave the queue at once, the others keeping their order', async () => {
    const slots = new ColdStartSlots(1);
    const first = await slots.acquire();
    const order: string[] = [];
    const leaving = new AbortController();
    const asks = {
      a: slots.acquire().then((release) => (order.push('a'), release)),
      b: slots.acquire(leaving.signal),
      c: slots.acquire().then((release) => (order.push('c'), release)),
    };
    await Promise.resolve();
    expect(slots.queued).toBe(3);

    leaving.abort(new Error('closed'));
    await expect(asks.b).rejects.toThrow('closed');
    expect(slots.queued).toBe(2);

    first();
    (await asks.a)();
    (await asks.c)();
    expect(order).toEqual(['a', 'c']);
    // The slot is free again: `b` never took it.
    expect(slots.queued).toBe(0);
    const started = await Promise.race([
      slots.acquire().then(() => 'started'),
      new Promise((resolve) => setImmediate(() => resolve('waiting'))),
    ]);
    expect(started).toBe('started');
  });

  it('refuses a signal already aborted without taking a slot', async () => {
    const slots = new ColdStartSlots(1);
    const gone = new AbortController();
    gone.abort(new Error('closed'));
    await expect(slots.acquire(gone.signal)).rejects.toThrow('closed');
    const started = await Promise.race([
      slots.acquire().then(() => 'started'),
      new Promise((resolve) => setImmediate(() => resolve('waiting'))),
    ]);
    expect(started).toBe('started');
  });

  it('keeps a slot handed over before the abort: the holder releases it', async () => {
    const slots = new ColdStartSlots(1);
    const first = await slots.acquire();
    const late = new AbortController();
    const waiting = slots.acquire(late.signal);
    first();
    late.abort(new Error('closed'));
    const release = await waiting;
    expect(slots.queued).toBe(0);
    release();
    const started = await Promise.race([
      slots.acquire().then(() => 'started'),
      new Promise((resolve) => setImmediate(() => resolve('waiting'))),
    ]);
    expect(started).toBe('started');
  });
});
