import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bull';
import { enqueueWithin } from '../../common/queues/enqueue-within';
import { enqueueTraced, JobTrace, TracedJobData } from '../../common/tracing';

export const DELIVERIES_QUEUE = 'webhook-deliveries';
export const EVALUATE_JOB = 'evaluate';

/** An accepted delivery named by its unique key (what the ingress knows without a read). */
export interface DeliveryKey {
  webhookId: string;
  deliveryId: string;
}

/** One delivery by log entry id (the sweeper), or several by key (the ingress, per batch). */
export type EvaluateJobData = ({ entryId: string } | { keys: DeliveryKey[] }) & TracedJobData;

const MAX_KEYS_PER_JOB = 200;

/**
 * Hands an accepted delivery to the automation evaluator (worker role). Losing the job is
 * harmless: the delivery row stays due, and the sweeper enqueues it again.
 */
@Injectable()
export class DeliveryEvaluationQueue {
  private readonly logger = new Logger('DeliveryEvaluationQueue');

  private pending: DeliveryKey[] = [];
  private flushing = false;

  constructor(@InjectQueue(DELIVERIES_QUEUE) readonly queue: Queue<EvaluateJobData>) {}

  /**
   * The ingress's way in: deliveries committed in the same event-loop turn go to Redis as one
   * job, which keeps the queue (and Redis) off the ingress's critical path under load.
   */
  enqueueSoon(keys: DeliveryKey[]): void {
    this.pending.push(...keys);
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => void this.flush());
    }
  }

  private async flush(): Promise<void> {
    while (this.pending.length) {
      const batch = this.pending.splice(0, MAX_KEYS_PER_JOB);
      // setImmediate kept the context of the first enqueueSoon: the job continues that trace.
      const outcome = await enqueueWithin(
        enqueueTraced(DELIVERIES_QUEUE, { 'ambient.webhook_deliveries': batch.length }, (trace) =>
          this.queue.add(EVALUATE_JOB, { keys: batch, ...traced(trace) }),
        ),
      );
      if (outcome.state !== 'done') {
        this.logger.warn(
          `enqueue of ${batch.length} deliveries ${outcome.state}; the sweeper will retry`,
        );
      }
    }
    this.flushing = false;
  }

  async enqueue(entryId: string): Promise<boolean> {
    const outcome = await enqueueWithin(
      enqueueTraced(DELIVERIES_QUEUE, { 'ambient.webhook_delivery_log_id': entryId }, (trace) =>
        this.queue.add(EVALUATE_JOB, { entryId, ...traced(trace) }, { jobId: `d${entryId}` }),
      ),
    );
    if (outcome.state === 'timeout')
      this.logger.warn(`enqueue of delivery ${entryId} timed out; the sweeper will retry`);
    return outcome.state === 'done';
  }
}

function traced(trace: JobTrace | undefined): TracedJobData {
  return trace ? { trace } : {};
}
