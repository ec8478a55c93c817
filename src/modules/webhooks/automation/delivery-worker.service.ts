import { Injectable, Logger } from '@nestjs/common';
import type { Job } from 'bull';
import {
  QueueProcessor,
  QueueProcessorHooks,
} from '../../../common/queues/queue-processor.decorator';
import { DELIVERIES_QUEUE, EVALUATE_JOB, EvaluateJobData } from '../delivery-evaluation.queue';
import { DeliveryEvaluator } from './delivery-evaluator.service';

/** Worker role: the processor of the `webhook-deliveries` queue. */
@Injectable()
export class DeliveryWorker implements QueueProcessorHooks {
  private readonly logger = new Logger('DeliveryWorker');

  constructor(private readonly evaluator: DeliveryEvaluator) {}

  @QueueProcessor<EvaluateJobData>(DELIVERIES_QUEUE, {
    job: EVALUATE_JOB,
    role: 'worker',
    concurrency: (config) => config.webhooks.evaluationConcurrency,
  })
  evaluate(job: Job<EvaluateJobData>): Promise<unknown> {
    return 'entryId' in job.data
      ? this.evaluator.evaluate(job.data.entryId)
      : this.evaluator.evaluateByKeys(job.data.keys);
  }

  jobFailed(job: Job<EvaluateJobData>, err: Error): void {
    const what =
      'entryId' in job.data ? `delivery ${job.data.entryId}` : `${job.data.keys.length} deliveries`;
    this.logger.warn(`${what} not evaluated (${err.message}); the sweeper retries`);
  }
}
