import { Injectable } from '@nestjs/common';
import { CoalescingBatcher } from '../common/coalescing-batcher';
import { MAX_STATEMENT_BYTES, valueBytes } from '../database/raw-sql';
import { DeliveryEvaluationQueue } from '../modules/webhooks/delivery-evaluation.queue';
import { AcceptedDelivery, DeliveryLog } from '../modules/webhooks/delivery-log.repository';

/** What a delivery's row takes in the INSERT besides its inlined values (dates, numbers, SQL). */
const ROW_OVERHEAD_BYTES = 256;

/** A bound of the bytes a delivery takes in the batch's INSERT (its body is inlined as hex). */
export function deliveryStatementBytes(delivery: AcceptedDelivery): number {
  return (
    ROW_OVERHEAD_BYTES +
    valueBytes(delivery.body) +
    valueBytes(delivery.webhookId) +
    2 * valueBytes(delivery.deliveryId) +
    valueBytes(delivery.contentKey ?? '')
  );
}

/**
 * Commits accepted deliveries, several per statement when they arrive together (one INSERT and
 * one commit for the batch instead of one each), and hands the new ones to the automation
 * evaluator as one job per batch. Losing that hand-over is harmless: the rows stay due and the
 * sweeper enqueues them. A batch stays within MAX_STATEMENT_BYTES: forty 256 KB bodies inlined
 * as hex in one statement would pass MariaDB's default `max_allowed_packet` (16 MiB), and the
 * whole batch would be refused.
 */
@Injectable()
export class AcceptedDeliveryWriter {
  private readonly batcher: CoalescingBatcher<AcceptedDelivery, boolean>;

  constructor(
    private readonly log: DeliveryLog,
    private readonly queue: DeliveryEvaluationQueue,
  ) {
    this.batcher = new CoalescingBatcher((batch) => this.write(batch), {
      maxBatch: 100,
      maxInFlight: 2,
      maxWeight: MAX_STATEMENT_BYTES,
      weightOf: deliveryStatementBytes,
    });
  }

  /** Resolves once the delivery is committed; `duplicate` when its identity was seen before. */
  async record(delivery: AcceptedDelivery): Promise<{ duplicate: boolean }> {
    return { duplicate: await this.batcher.submit(delivery) };
  }

  private async write(batch: AcceptedDelivery[]): Promise<boolean[]> {
    const duplicates = await this.log.recordAcceptedMany(batch);
    const fresh = batch.filter((_, i) => !duplicates[i]);
    if (fresh.length > 0) {
      this.queue.enqueueSoon(
        fresh.map((d) => ({ webhookId: d.webhookId, deliveryId: d.deliveryId })),
      );
    }
    return duplicates;
  }
}
