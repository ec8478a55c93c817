import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { Queue } from 'bull';
import { tracingEnabled } from '../../config/tracing-enabled';
import { CoalescingBatcher } from '../../common/coalescing-batcher';
import { enqueueWithin } from '../../common/queues/enqueue-within';
import { BulkAdder, ThreadedBulkAdder } from '../../common/queues/threaded-bulk-adder';
import { bullQueueOptions } from '../../common/redis/bull-options';
import { enqueueTraced, RUN_ID, TracedJobData } from '../../common/tracing';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import type { Run } from './entities/run.entity';
import { RunSignals } from './run-signals.service';

export const RUNS_QUEUE = 'runs';
export const EXECUTE_JOB = 'execute';

export interface ExecuteJobData extends TracedJobData {
  runId: string;
}

/**
 * Puts runs on the Bull queue. The job id is the run id, so enqueueing twice is a no-op. A
 * failure here never fails the request that committed the run (a creation does not even wait
 * for it): the dispatch sweeper enqueues every QUEUED run that has no job.
 */
@Injectable()
export class RunQueue implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('RunQueue');
  /**
   * What adds the jobs: in a replica that creates runs (api, ingress), a thread of its own
   * (ThreadedBulkAdder) unless tracing is on, which keeps the enqueue's Redis span in the
   * request's trace; else the queue itself.
   */
  readonly adder: BulkAdder<ExecuteJobData>;
  private readonly thread: ThreadedBulkAdder<ExecuteJobData> | null;
  private readonly adds = new CoalescingBatcher<ExecuteJobData, boolean>(
    (jobs) => this.addJobs(jobs),
    {
      maxBatch: 100,
      maxInFlight: 2,
    },
  );

  constructor(
    @InjectQueue(RUNS_QUEUE) readonly queue: Queue<ExecuteJobData>,
    private readonly signals: RunSignals,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const createsRuns = config.roles.includes('api') || config.roles.includes('ingress');
    this.thread =
      createsRuns && !tracingEnabled()
        ? new ThreadedBulkAdder(RUNS_QUEUE, bullQueueOptions(config), queue)
        : null;
    this.adder = this.thread ?? queue;
  }

  onModuleInit(): void {
    void this.thread?.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.thread?.close();
  }

  /**
   * Hands a QUEUED run to whoever executes it: the Bull queue for Ambient's own workers, or a
   * hint to every API replica holding a connection of the team's self-hosted worker host (the
   * run waits in MySQL; the replicas offer it from there).
   */
  async dispatch(run: Pick<Run, 'id' | 'teamId' | 'workerHost'>): Promise<boolean> {
    if (!run.workerHost) return this.enqueue(run.id);
    await this.signals.publishSelfHostedWork(run.teamId, run.workerHost);
    return true;
  }

  /**
   * Adds the run's job; concurrent calls share one `addBulk` (one Redis round trip). The job
   * carries the caller's trace context, so its execution continues the caller's trace.
   */
  enqueue(runId: string): Promise<boolean> {
    return enqueueTraced(RUNS_QUEUE, { [RUN_ID]: runId }, (trace) =>
      this.adds.submit(trace ? { runId, trace } : { runId }),
    );
  }

  private async addJobs(data: ExecuteJobData[]): Promise<boolean[]> {
    const runIds = data.map((job) => job.runId);
    const jobs = data.map((job) => ({ name: EXECUTE_JOB, data: job, opts: { jobId: job.runId } }));
    const outcome = await enqueueWithin(this.adder.addBulk(jobs));
    if (outcome.state === 'done') return runIds.map(() => true);
    const runs = runIds.length === 1 ? `run ${runIds[0]}` : `${runIds.length} runs`;
    this.logger.warn(
      outcome.state === 'timeout'
        ? `enqueue of ${runs} timed out; the dispatch sweeper will retry`
        : `enqueue of ${runs} failed (${outcome.error.message}); will retry`,
    );
    return runIds.map(() => false);
  }

  /**
   * Makes sure a QUEUED run has a live job: a missing job is added, one left by an execution that
   * ended or crashed (completed, failed, or in no list) is replaced. Returns true when it enqueued.
   *
   * An active job is left alone: a live worker holds it, or a dead one's lock lapses and Bull's
   * stalled-job check (every `stalledInterval`, the lease) puts it back to wait, or fails it after
   * a second stall, and it is replaced then. Removing it here raced a worker's take, which moves
   * it to the active list, then locks it and writes `processedOn`: removed between the two, the
   * job's hash came back with nothing but `processedOn`, in no list of the queue, never run, and a
   * plain `enqueue` of the run's id is a no-op while it is there (this replaces it).
   */
  async ensureJob(runId: string): Promise<boolean> {
    const job = await this.queue.getJob(runId);
    if (job) {
      const state = await job.getState();
      if (['waiting', 'delayed', 'paused', 'active'].includes(state)) return false;
      await job.remove().catch(() => undefined);
    }
    return this.enqueue(runId);
  }

  async remove(runId: string): Promise<void> {
    const job = await this.queue.getJob(runId).catch(() => null);
    if (job && (await job.getState()) !== 'active') await job.remove().catch(() => undefined);
  }
}
