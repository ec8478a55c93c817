import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import type { Job } from 'bull';
import { context } from '@opentelemetry/api';
import { jobContext, processJob, RUN_ID } from '../../../common/tracing';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { EXECUTE_JOB, ExecuteJobData, RunQueue, RUNS_QUEUE } from '../run-queue.service';
import { ExecuteOutcome, RunExecutor } from './run-executor.service';

/**
 * The Bull processor of the `runs` queue (worker role). Concurrency comes from config, so the
 * processor is registered here rather than with a static decorator.
 */
@Injectable()
export class RunWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('RunWorker');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly runQueue: RunQueue,
    private readonly executor: RunExecutor,
  ) {}

  onApplicationBootstrap(): void {
    const { queue } = this.runQueue;
    queue.on('completed', (job: Job<ExecuteJobData>, outcome: ExecuteOutcome | undefined) => {
      // The finished job is gone by now, so the run's id is free for its next execution.
      if (!outcome?.requeue) return;
      void context.with(jobContext(job.data), () => this.runQueue.enqueue(job.data.runId));
    });
    queue.on('error', (err) => this.logger.warn(`queue error: ${err.message}`));
    void queue
      .process(EXECUTE_JOB, this.config.runs.workerConcurrency, (job: Job<ExecuteJobData>) =>
        processJob(RUNS_QUEUE, job, { [RUN_ID]: job.data.runId }, () =>
          this.executor.execute(job.data.runId),
        ),
      )
      .catch((err: Error) => this.logger.error(`run processor stopped: ${err.message}`));
    this.logger.log(
      `processing runs as ${this.executor.workerId} (concurrency ${this.config.runs.workerConcurrency})`,
    );
  }

  /**
   * Graceful stop: take no new jobs, let running executions finish within the shutdown budget,
   * then hand the rest back to the queue for another worker.
   */
  async onModuleDestroy(): Promise<void> {
    const { queue } = this.runQueue;
    const deadline = Date.now() + this.config.server.shutdownTimeoutMs;
    const paused = queue.pause(true, true).catch(() => undefined);
    while (this.executor.activeCount > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (this.executor.activeCount > 0) {
      this.logger.warn(`handing ${this.executor.activeCount} run(s) back to the queue`);
      this.executor.abortAll('shutdown');
      while (this.executor.activeCount > 0 && Date.now() < deadline + 5000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    await paused;
  }
}
