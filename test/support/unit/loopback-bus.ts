import type { EntityManager } from 'typeorm';
import type { Invalidation, InvalidationBus } from '../../../src/common/cache/broadcast-cache';

/**
 * The broadcast as one replica sees it, for a spec of a cache on a real database: what is
 * announced reaches the listeners at once (no Redis, no commit to wait for).
 */
export class LoopbackBus implements InvalidationBus {
  live = true;
  readonly cacheTtlMs = 60_000;
  private readonly listeners: ((invalidation: Invalidation | null) => void)[] = [];

  listen(listener: (invalidation: Invalidation | null) => void): void {
    this.listeners.push(listener);
  }

  changed(_manager: EntityManager | undefined, topic: string, ids: readonly string[]) {
    for (const id of ids) for (const listener of this.listeners) listener({ topic, id });
    return Promise.resolve();
  }
}
