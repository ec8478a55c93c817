import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
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
 * The least time between two of the ingress's jobs. Under load the deliveries of several insert
 * batches share one job: adding a job (a Redis script call) cost the ingress's thread ~160 µs,
 * over half of what a whole delivery costs; a delivery after a quiet spell still goes at once.
 */
export const MIN_JOB_INTERVAL_MS = 10;

/**
 * Hands an accepted delivery to the automation evaluator (worker role). Losing the job is
 * harmless: the delivery row stays due, and the sweeper enqueues it again.
 */
@Injectable()
export class DeliveryEvaluationQueue {
  private readonly logger = new Logger('DeliveryEvaluationQueue');

  private pending: DeliveryKey[] = [];
  /** Runs a function in the context of the first pending delivery's enqueueSoon (its trace). */
  private inFirstContext: ReturnType<typeof AsyncLocalStorage.snapshot> | null = null;
  private flushing = false;
  private lastAddAt = -Infinity;

  constructor(@InjectQueue(DELIVERIES_QUEUE) readonly queue: Queue<EvaluateJobData>) {}

  /**
   * The ingress's way in, off its critical path: the deliveries committed in the same event-loop
   * turn, or within MIN_JOB_INTERVAL_MS of the last job, go to Redis as one job.
   */
  enqueueSoon(keys: DeliveryKey[]): void {
    if (this.pending.length === 0) this.inFirstContext = AsyncLocalStorage.snapshot();
    this.pending.push(...keys);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    const run = this.inFirstContext;
    if (this.flushing || this.pending.length === 0 || !run) return;
    this.flushing = true;
    // The job continues the trace of the first delivery it carries.
    const flush = () => run(() => void this.flush());
    const wait = this.lastAddAt + MIN_JOB_INTERVAL_MS - performance.now();
    if (wait > 0) setTimeout(flush, wait);
    else setImmediate(flush);
  }

  private async flush(): Promise<void> {
    const batch = this.pending.splice(0, MAX_KEYS_PER_JOB);
    this.lastAddAt = performance.now();
    try {
      const outcome = await enqueueWithin(
        enqueueTraced(DELIVERIES_QUEUE, { 'ambient.webhook_deliveries': batch.length }, (trace) =>
          this.queue.add(EVALUATE_JOB, { keys: batch, ...traced(trace) }),
        ),
      );
      if (outcome.state !== 'done') this.leftToSweeper(batch.length, outcome.state);
    } catch {
      this.leftToSweeper(batch.length, 'failed');
    } finally {
      this.flushing = false;
      this.scheduleFlush();
    }
  }

  private leftToSweeper(deliveries: number, state: string): void {
    this.logger.warn(`enqueue of ${deliveries} deliveries ${state}; the sweeper will retry`);
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
