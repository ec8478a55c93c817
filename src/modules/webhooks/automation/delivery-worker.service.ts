import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { Job } from 'bull';
import { processJob } from '../../../common/tracing';
import {
  DELIVERIES_QUEUE,
  DeliveryEvaluationQueue,
  EVALUATE_JOB,
  EvaluateJobData,
} from '../delivery-evaluation.queue';
import { DeliveryEvaluator } from './delivery-evaluator.service';

const CONCURRENCY = 4;

/** Worker role: the Bull processor of the `webhook-deliveries` queue. */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('DeliveryWorker');

  constructor(
    private readonly evaluations: DeliveryEvaluationQueue,
    private readonly evaluator: DeliveryEvaluator,
  ) {}

  onApplicationBootstrap(): void {
    const { queue } = this.evaluations;
    queue.on('error', (err) => this.logger.warn(`queue error: ${err.message}`));
    queue.on('failed', (job: Job<EvaluateJobData>, err) => {
      const what =
        'entryId' in job.data
          ? `delivery ${job.data.entryId}`
          : `${job.data.keys.length} deliveries`;
      this.logger.warn(`${what} not evaluated (${err.message}); the sweeper retries`);
    });
    void queue
      .process(EVALUATE_JOB, CONCURRENCY, (job: Job<EvaluateJobData>) =>
        processJob(DELIVERIES_QUEUE, job, {}, () =>
          'entryId' in job.data
            ? this.evaluator.evaluate(job.data.entryId)
            : this.evaluator.evaluateByKeys(job.data.keys),
        ),
      )
      .catch((err: Error) => this.logger.error(`delivery processor stopped: ${err.message}`));
  }

  async onModuleDestroy(): Promise<void> {
    await this.evaluations.queue.pause(true, false).catch(() => undefined);
  }
}
