import { Injectable } from '@nestjs/common';
import { CoalescingBatcher } from '../common/coalescing-batcher';
import { IngressWebhook, WebhookStore } from '../modules/webhooks/webhook-store.service';

/**
 * The webhook of each delivery, read from MySQL for every request (so disabling, deleting and
 * rotating take effect at once on every replica), with concurrent lookups sharing one query.
 * One query at a time: a primary-key read is quick, so waiting for the one in flight costs less
 * than sending another.
 */
@Injectable()
export class WebhookLookup {
  private readonly batcher: CoalescingBatcher<string, IngressWebhook | null>;

  constructor(store: WebhookStore) {
    this.batcher = new CoalescingBatcher((ids) => store.findForIngress(ids), {
      maxBatch: 100,
      maxInFlight: 1,
    });
  }

  find(uid: string): Promise<IngressWebhook | null> {
    return this.batcher.submit(uid);
  }
}
