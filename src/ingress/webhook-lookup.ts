import { Inject, Injectable } from '@nestjs/common';
import { BroadcastCache, InvalidationBus } from '../common/cache/broadcast-cache';
import { CoalescingBatcher } from '../common/coalescing-batcher';
import { Invalidations } from '../common/cache/invalidations';
import {
  IngressWebhook,
  WEBHOOK_TOPIC,
  WebhookStore,
} from '../modules/webhooks/webhook-store.repository';

const CACHED_WEBHOOKS = 20_000;
/** The last quarter of an entry's life, in which a delivery's read reloads it (see BroadcastCache). */
const REFRESH_AHEAD_SHARE = 0.25;

/**
 * The webhook of each delivery. Found webhooks are cached in process; disabling, deleting and
 * rotating a webhook is broadcast when it commits (WebhookStore), which drops it on every
 * replica before that change is answered, and nothing is cached while the broadcast is not
 * heard (`Invalidations`); a webhook in steady use is reloaded before its entry expires. Misses
 * (unknown, disabled, deleted) are read from MySQL every time,
 * concurrent ones sharing one query; one query at a time: a primary-key read is quick, so
 * waiting for the one in flight costs less than sending another.
 */
@Injectable()
export class WebhookLookup {
  private readonly batcher: CoalescingBatcher<string, IngressWebhook | null>;
  private readonly cache: BroadcastCache<IngressWebhook & { secret?: string }>;

  constructor(store: WebhookStore, @Inject(Invalidations) invalidations: InvalidationBus) {
    this.batcher = new CoalescingBatcher((ids) => store.findForIngress(ids), {
      maxBatch: 100,
      maxInFlight: 1,
    });
    this.cache = new BroadcastCache(invalidations, {
      ttlMs: invalidations.cacheTtlMs,
      maxEntries: CACHED_WEBHOOKS,
      affects: (webhook, change) => change.topic === WEBHOOK_TOPIC && webhook.id === change.id,
      // A webhook in steady use is reloaded in the background (batched with the others being
      // reloaded) before it expires, instead of making one of its deliveries wait for MySQL.
      refreshAheadMs: invalidations.cacheTtlMs * REFRESH_AHEAD_SHARE,
      // An unchanged webhook stays the cached object, with its decrypted secret.
      unchanged: sameWebhook,
    });
  }

  /** The webhook (the same object while it is cached: the ingress memoises its decrypted `secret` on it). */
  find(uid: string): Promise<(IngressWebhook & { secret?: string }) | null> {
    return this.cache.get(uid, () => this.batcher.submit(uid));
  }
}

/** Every field the store read is equal (the ciphertext by content); `secret` is a memo, not a field. */
function sameWebhook(cached: IngressWebhook, loaded: IngressWebhook): boolean {
  return (Object.keys(loaded) as (keyof IngressWebhook)[]).every((field) => {
    const [a, b] = [cached[field], loaded[field]];
    return Buffer.isBuffer(a) && Buffer.isBuffer(b) ? a.equals(b) : a === b;
  });
}
