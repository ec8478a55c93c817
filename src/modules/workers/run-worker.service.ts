import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Job } from 'bull';
import { context } from '@opentelemetry/api';
import { QueueProcessor, QueueProcessorHooks } from '../../common/queues/queue-processor.decorator';
import { jobContext, RUN_ID } from '../../common/tracing';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { EXECUTE_JOB, ExecuteJobData, RunQueue, RUNS_QUEUE, RunCapacity } from '../runs';
import { ExecuteOutcome, RunExecutor } from './run-executor.service';
import { SandboxService } from './sandbox/sandbox.service';

/** The processor of the `runs` queue (worker role): each job is one execution of its run. */
@Injectable()
export class RunWorker implements QueueProcessorHooks {
  private readonly logger = new Logger('RunWorker');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly runQueue: RunQueue,
    private readonly executor: RunExecutor,
    private readonly capacity: RunCapacity,
    private readonly sandboxes: SandboxService,
  ) {}

  @QueueProcessor<ExecuteJobData>(RUNS_QUEUE, {
    job: EXECUTE_JOB,
    role: 'worker',
    concurrency: (config) => config.runs.workerConcurrency,
    attributes: (data) => ({ [RUN_ID]: data.runId }),
  })
  execute(job: Job<ExecuteJobData>): Promise<ExecuteOutcome> {
    return this.executor.execute(job.data.runId);
  }

  jobCompleted(job: Job<ExecuteJobData>, outcome: ExecuteOutcome | undefined): void {
    // The finished job is gone by now, so the run's id is free for its next execution. A run
    // refused a slot looks again: a slot freed while this job was still active could not
    // enqueue it (the job id was taken).
    if (outcome?.atCapacity) void this.capacity.dispatchWaitingOf(job.data.runId);
    if (!outcome?.requeue) return;
    void context.with(jobContext(job.data), () => this.runQueue.enqueue(job.data.runId));
  }

  /**
   * Graceful stop (the queue takes no new jobs by now): let running executions finish within the
   * shutdown budget, then hand the rest back to the queue for another worker. Meanwhile the warm
   * pool makes no more sandboxes and removes its idle ones: the sandbox's own drain comes only
   * after this one (at application shutdown, seconds before the process is made to exit).
   */
  async drain(): Promise<void> {
    this.sandboxes.stopWarming();
    const deadline = Date.now() + this.config.server.shutdownTimeoutMs;
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
  }
}
