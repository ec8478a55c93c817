import { BroadcastCache, Invalidation, InvalidationSource } from './broadcast-cache';

class FakeSource implements InvalidationSource {
  live = true;
  private readonly listeners: ((i: Invalidation | null) => void)[] = [];
  listen(listener: (i: Invalidation | null) => void): void {
    this.listeners.push(listener);
  }
  send(invalidation: Invalidation | null): void {
    for (const listener of this.listeners) listener(invalidation);
  }
}

interface Row {
  id: string;
  team: string;
  version: number;
}

function setup(ttlMs = 60_000, maxEntries = 100, refreshAheadMs = 0) {
  const source = new FakeSource();
  const cache = new BroadcastCache<Row>(source, {
    ttlMs,
    maxEntries,
    refreshAheadMs,
    affects: (row, change) =>
      (change.topic === 'row' && row.id === change.id) ||
      (change.topic === 'team' && row.team === change.id),
  });
  let version = 0;
  const loads: string[] = [];
  const load =
    (id: string, team = 't1') =>
    () => {
      loads.push(id);
      version += 1;
      return Promise.resolve<Row>({ id, team, version });
    };
  return { source, cache, load, loads };
}

describe('BroadcastCache', () => {
  it('serves a found value from memory until it is invalidated', async () => {
    const { source, cache, load, loads } = setup();
    expect((await cache.get('a', load('a')))?.version).toBe(1);
    expect((await cache.get('a', load('a')))?.version).toBe(1);
    expect(loads).toEqual(['a']);
    source.send({ topic: 'row', id: 'a' });
    expect((await cache.get('a', load('a')))?.version).toBe(2);
  });

  it('peeks at a fresh entry without loading, and at nothing once it is invalidated or unheard', async () => {
    const { source, cache, load, loads } = setup();
    expect(cache.peek('a')).toBeUndefined();
    await cache.get('a', load('a'));
    expect(cache.peek('a')?.version).toBe(1);
    source.send({ topic: 'row', id: 'a' });
    expect(cache.peek('a')).toBeUndefined();
    await cache.get('a', load('a'));
    source.live = false;
    expect(cache.peek('a')).toBeUndefined();
    expect(loads).toEqual(['a', 'a']);
  });

  it('drops only the entries the change affects', async () => {
    const { source, cache, load, loads } = setup();
    await cache.get('a', load('a', 't1'));
    await cache.get('b', load('b', 't2'));
    source.send({ topic: 'team', id: 't1' });
    await cache.get('a', load('a', 't1'));
    await cache.get('b', load('b', 't2'));
    expect(loads).toEqual(['a', 'b', 'a']);
  });

  it('never caches a miss', async () => {
    const { cache } = setup();
    let calls = 0;
    const miss = () => {
      calls += 1;
      return Promise.resolve(null);
    };
    expect(await cache.get('x', miss)).toBeNull();
    expect(await cache.get('x', miss)).toBeNull();
    expect(calls).toBe(2);
  });

  it('does not store a load that was under way when a change arrived', async () => {
    const { source, cache, load, loads } = setup();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = cache.get('a', async () => {
      await gate;
      return { id: 'a', team: 't1', version: 0 };
    });
    source.send({ topic: 'row', id: 'other' });
    release();
    expect((await slow)?.version).toBe(0); // answered …
    await cache.get('a', load('a'));
    expect(loads).toEqual(['a']); // … but not stored
  });

  it('lets concurrent misses of one key share one load', async () => {
    const { cache, load, loads } = setup();
    const answers = await Promise.all([1, 2, 3].map(() => cache.get('a', load('a'))));
    expect(answers.map((row) => row?.version)).toEqual([1, 1, 1]);
    expect(loads).toEqual(['a']);
  });

  it('never joins a load begun before a change arrived', async () => {
    const { source, cache, load, loads } = setup();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const before = cache.get('a', async () => {
      await gate;
      return { id: 'a', team: 't1', version: 0 };
    });
    source.send({ topic: 'row', id: 'a' });
    const after = cache.get('a', load('a'));
    release();
    expect((await before)?.version).toBe(0);
    expect((await after)?.version).toBe(1);
    expect(loads).toEqual(['a']);
  });

  it('loads again after a shared load failed', async () => {
    const { cache, load, loads } = setup();
    const failing = () => Promise.reject(new Error('database gone'));
    await expect(Promise.all([cache.get('a', failing), cache.get('a', failing)])).rejects.toThrow(
      'database gone',
    );
    expect((await cache.get('a', load('a')))?.version).toBe(1);
    expect(loads).toEqual(['a']);
  });

  it('caches nothing while the broadcast is not heard, and empties on loss', async () => {
    const { source, cache, load, loads } = setup();
    await cache.get('a', load('a'));
    source.live = false;
    source.send(null);
    expect(cache.size).toBe(0);
    await cache.get('a', load('a'));
    await cache.get('a', load('a'));
    expect(cache.size).toBe(0);
    source.live = true;
    await cache.get('a', load('a'));
    await cache.get('a', load('a'));
    expect(loads).toEqual(['a', 'a', 'a', 'a']);
  });

  it('ends an entry at its TTL or its own expiry, whichever is first', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    try {
      const { cache, load, loads } = setup(5000);
      await cache.get('a', load('a'));
      await cache.get('b', load('b'), () => Date.now() + 1000);
      jest.setSystemTime(1_000_000 + 1500);
      await cache.get('a', load('a'));
      await cache.get('b', load('b'));
      expect(loads).toEqual(['a', 'b', 'b']);
      jest.setSystemTime(1_000_000 + 5500);
      await cache.get('a', load('a'));
      expect(loads).toEqual(['a', 'b', 'b', 'a']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('is off with a TTL of 0', async () => {
    const { cache, load, loads } = setup(0);
    await cache.get('a', load('a'));
    await cache.get('a', load('a'));
    expect(loads).toEqual(['a', 'a']);
  });

  it('evicts the least recently stored entry beyond its size', async () => {
    const { cache, load, loads } = setup(60_000, 2);
    await cache.get('a', load('a'));
    await cache.get('b', load('b'));
    await cache.get('c', load('c'));
    expect(cache.size).toBe(2);
    await cache.get('a', load('a'));
    expect(loads).toEqual(['a', 'b', 'c', 'a']);
  });

  describe('refreshing ahead', () => {
    const T0 = 1_000_000;
    beforeEach(() => jest.useFakeTimers({ now: T0 }));
    afterEach(() => jest.useRealTimers());

    it('serves an entry read near its expiry and reloads it in the background, so it is never missed', async () => {
      const { cache, load, loads } = setup(5000, 100, 1000);
      await cache.get('a', load('a'));
      jest.setSystemTime(T0 + 3900); // not yet in the last second
      expect((await cache.get('a', load('a')))?.version).toBe(1);
      await jest.advanceTimersByTimeAsync(1000);
      expect(loads).toEqual(['a']);
      jest.setSystemTime(T0 + 4500);
      expect((await cache.get('a', load('a')))?.version).toBe(1); // served, reload due
      expect(loads).toEqual(['a']);
      await jest.advanceTimersByTimeAsync(250); // the reloads due start together
      expect(loads).toEqual(['a', 'a']);
      jest.setSystemTime(T0 + 9000); // past the first entry's expiry, within the reloaded one's
      expect((await cache.get('a', load('a')))?.version).toBe(2);
      expect(loads).toEqual(['a', 'a']);
    });

    it('starts the reloads that came due meanwhile together, each once', async () => {
      const { cache, load, loads } = setup(5000, 100, 1000);
      await cache.get('a', load('a'));
      await cache.get('b', load('b'));
      jest.setSystemTime(T0 + 4100);
      await cache.get('a', load('a'));
      await cache.get('a', load('a'));
      jest.setSystemTime(T0 + 4200);
      await cache.get('b', load('b'));
      expect(loads).toEqual(['a', 'b']);
      await jest.advanceTimersByTimeAsync(250);
      expect(loads).toEqual(['a', 'b', 'a', 'b']);
    });

    it('drops the entry when its reload finds nothing, and keeps it when the reload fails', async () => {
      const { cache, load, loads } = setup(5000, 100, 1000);
      await cache.get('a', load('a'));
      await cache.get('b', load('b'));
      jest.setSystemTime(T0 + 4500);
      await cache.get('a', () => Promise.resolve(null)); // deleted meanwhile
      await cache.get('b', () => Promise.reject(new Error('database gone')));
      await jest.advanceTimersByTimeAsync(250);
      expect(cache.size).toBe(1);
      expect((await cache.get('b', load('b')))?.version).toBe(2); // still the cached one
      expect((await cache.get('a', load('a')))?.version).toBe(3); // loaded on a miss
      expect(loads).toEqual(['a', 'b', 'a']);
    });

    it('does not store a reload under way when a change arrived', async () => {
      const { source, cache, load, loads } = setup(5000, 100, 1000);
      await cache.get('a', load('a'));
      jest.setSystemTime(T0 + 4500);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      await cache.get('a', async () => {
        await gate;
        return { id: 'a', team: 't1', version: 0 };
      });
      await jest.advanceTimersByTimeAsync(250);
      source.send({ topic: 'team', id: 'other' });
      release();
      await jest.advanceTimersByTimeAsync(0);
      jest.setSystemTime(T0 + 5500);
      expect((await cache.get('a', load('a')))?.version).toBe(2); // a miss: the reload was not kept
      expect(loads).toEqual(['a', 'a']);
    });
  });
});
