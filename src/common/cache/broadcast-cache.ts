import type { EntityManager } from 'typeorm';

/** One changed thing: `topic` names its kind (`api_key`, `user`, `webhook` …), `id` the row. */
export interface Invalidation {
  topic: string;
  id: string;
}

/**
 * Where a cache hears about changes: `invalidation` for one change, `null` when changes may have
 * been missed (the broadcast connection was lost), which drops everything.
 */
export interface InvalidationSource {
  /** True while changes are heard; a cache serves and stores nothing while it is false. */
  readonly live: boolean;
  listen(listener: (invalidation: Invalidation | null) => void): void;
}

/** What a service that caches rows, or changes them, needs of the broadcast (`Invalidations`). */
export interface InvalidationBus extends InvalidationSource {
  /** The longest a cache may serve an entry; 0 = no caching. */
  readonly cacheTtlMs: number;
  /** Announces changed rows, once `manager`'s transaction (if any) has committed. */
  changed(manager: EntityManager | undefined, topic: string, ids: readonly string[]): Promise<void>;
}

export interface BroadcastCacheOptions<V> {
  /** How long an entry is served at most; 0 turns the cache off. */
  ttlMs: number;
  maxEntries: number;
  /** Whether the change makes the entry stale. */
  affects(value: V, invalidation: Invalidation): boolean;
  /**
   * An entry read this close to its expiry is still served, and reloaded in the background (as
   * a load on a miss is, under the same rules), so that one in steady use is never missed on the
   * request path. The reloads due are started together a quarter of this later, so that a loader
   * that batches concurrent loads reads them in a few queries. Off (0) by default.
   */
  refreshAheadMs?: number;
  /**
   * Whether a value loaded again equals the one cached. Then the cached object is kept, with
   * anything memoised on it, and only its expiry moves: an entry in steady use stays one
   * long-lived object rather than a new one per reload (each of which outlives the young
   * generation and becomes old garbage).
   */
  unchanged?(cached: V, loaded: V): boolean;
}

/**
 * The cache of a service whose broadcaster is optional (the CLI has none, and caches nothing):
 * null without one, else a BroadcastCache whose entries live at most the broadcast's TTL.
 */
export function optionalBroadcastCache<V>(
  invalidations: InvalidationBus | undefined,
  options: Omit<BroadcastCacheOptions<V>, 'ttlMs'>,
): BroadcastCache<V> | null {
  return invalidations
    ? new BroadcastCache(invalidations, { ...options, ttlMs: invalidations.cacheTtlMs })
    : null;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * An in-process read-through cache whose entries every replica drops as soon as the change that
 * makes them stale is broadcast (`Invalidations`), and that caches nothing while the broadcast
 * is not heard. A load that was under way when any change arrived is answered but not stored:
 * it may have read the row before that change committed. Only found values are cached.
 * Concurrent misses of one key share one load (an entry expiring under load would otherwise send
 * every request in flight to the database at once), but never one begun before a change arrived.
 */
export class BroadcastCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /** Loads under way, by key; emptied by every change, so none begun before it is joined. */
  private readonly loading = new Map<string, Promise<V | null>>();
  /** Background reloads waiting for `refreshTimer`, by key. */
  private readonly dueRefreshes = new Map<string, () => void>();
  private refreshTimer: NodeJS.Timeout | null = null;
  private generation = 0;

  constructor(
    private readonly source: InvalidationSource,
    private readonly options: BroadcastCacheOptions<V>,
  ) {
    source.listen((invalidation) => this.invalidate(invalidation));
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The cached value of `key`, else `load()`'s (stored when found); `expiresAt` (epoch ms) ends
   * an entry sooner than the TTL (e.g. an API key's own expiry).
   */
  async get(
    key: string,
    load: () => Promise<V | null>,
    expiresAt?: (value: V) => number | null,
  ): Promise<V | null> {
    const enabled = this.enabled;
    if (enabled) {
      const entry = this.entries.get(key);
      const now = Date.now();
      if (entry && entry.expiresAt > now) {
        const { refreshAheadMs = 0 } = this.options;
        if (entry.expiresAt - now <= refreshAheadMs) this.refreshSoon(key, load, expiresAt);
        return entry.value;
      }
      if (entry) this.entries.delete(key);
    }
    const pending = enabled ? this.loading.get(key) : undefined;
    if (pending) return pending;
    if (!enabled) return load();
    return this.loadAndStore(key, load, expiresAt);
  }

  private refreshSoon(
    key: string,
    load: () => Promise<V | null>,
    expiresAt?: (value: V) => number | null,
  ): void {
    if (this.loading.has(key) || this.dueRefreshes.has(key)) return;
    // Its failure is nobody's: the entry is served until it expires, then loaded on a miss.
    this.dueRefreshes.set(key, () => {
      this.loadAndStore(key, load, expiresAt).catch(() => undefined);
    });
    this.refreshTimer ??= setTimeout(
      () => {
        this.refreshTimer = null;
        const due = [...this.dueRefreshes.values()];
        this.dueRefreshes.clear();
        for (const refresh of due) refresh();
      },
      (this.options.refreshAheadMs ?? 0) / 4,
    ).unref();
  }

  /** Loads `key`, shared with any `get` meanwhile, and stores the value when nothing changed. */
  private async loadAndStore(
    key: string,
    load: () => Promise<V | null>,
    expiresAt?: (value: V) => number | null,
  ): Promise<V | null> {
    const generation = this.generation;
    const loaded = load();
    this.loading.set(key, loaded);
    try {
      const value = await loaded;
      if (!this.enabled || generation !== this.generation) return value;
      // A refresh that finds nothing (the row is gone) drops the entry it was refreshing.
      if (value === null) {
        this.entries.delete(key);
        return null;
      }
      return this.store(key, value, expiresAt?.(value) ?? null);
    } finally {
      if (this.loading.get(key) === loaded) this.loading.delete(key);
    }
  }

  /**
   * The fresh cached value of `key`, without loading one (undefined on a miss): for a caller inside
   * a transaction, which must not wait for another connection of the pool.
   */
  peek(key: string): V | undefined {
    if (!this.enabled) return undefined;
    const entry = this.entries.get(key);
    return entry && entry.expiresAt > Date.now() ? entry.value : undefined;
  }

  /** Drops the entry of `key` on this replica only. */
  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Whether it caches at all now: a TTL above 0 and the broadcast heard. */
  get enabled(): boolean {
    return this.options.ttlMs > 0 && this.source.live;
  }

  /** Stores `value`, or extends the cached entry when it is unchanged; returns what is cached. */
  private store(key: string, value: V, expiresAt: number | null): V {
    const until = Math.min(Date.now() + this.options.ttlMs, expiresAt ?? Infinity);
    if (until <= Date.now()) return value;
    const cached = this.entries.get(key);
    const kept = cached && this.options.unchanged?.(cached.value, value) ? cached : null;
    this.entries.delete(key); // re-inserted last: the Map's order is the eviction order
    if (kept) {
      kept.expiresAt = until;
      this.entries.set(key, kept);
      return kept.value;
    }
    if (this.entries.size >= this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: until });
    return value;
  }

  private invalidate(invalidation: Invalidation | null): void {
    this.generation += 1;
    this.loading.clear();
    if (!invalidation) return this.entries.clear();
    for (const [key, entry] of this.entries) {
      if (this.options.affects(entry.value, invalidation)) this.entries.delete(key);
    }
  }
}
