import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PeriodicTask, PeriodicWorker } from '../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { RunQueue, RunLeaseRepository, RunTransitions, RunCapacity } from '../runs';

const BATCH = 200;

/**
 * Housekeeping that keeps accepted runs from being lost (worker role, safe in every replica):
 * - dispatch: a QUEUED run whose job is missing (Redis was down, a process died) is enqueued;
 *   runs waiting for a concurrency slot are dispatched if one is free (a wake-up that was lost);
 * - recovery: a claimed run whose worker stopped renewing its lease is retried once more
 *   (up to runs.maxAttempts executions) or ends in ERROR with internal_error.
 */
@Injectable()
export class RunSweeper extends PeriodicWorker {
  private readonly logger = new Logger('RunSweeper');
  protected readonly tasks: PeriodicTask[];
  /**
   * Where the next sweep's look at teams with waiting runs starts (team ids in order, a batch at a
   * time): with more such teams than a batch, each is looked at within a few sweeps, not only the
   * same first batch every time.
   */
  private waitingAfter: string | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly records: RunLeaseRepository,
    private readonly runQueue: RunQueue,
    private readonly transitions: RunTransitions,
    private readonly capacity: RunCapacity,
    registry: SchedulerRegistry,
  ) {
    super();
    this.tasks = [
      new PeriodicTask({
        name: 'runs.sweep',
        intervalMs: config.runs.dispatchSweepIntervalMs,
        // Every step is a guarded transition or an add Bull makes idempotent: a sweep left behind
        // may race a new one for the same run, which the claim (guarded on execution_count) settles.
        hungAfterMs: Math.max(30_000, 10 * config.runs.dispatchSweepIntervalMs),
        logger: this.logger,
        registry,
        // Each step on its own: one that fails (and logs) never keeps the others from running.
        work: async () => {
          await this.step('lease recovery', () => this.recoverLapsedLeases());
          await this.step('dispatch of runs without a job', () => this.dispatchOrphans());
          await this.step('dispatch of runs waiting for a slot', () => this.dispatchWaiting());
        },
      }),
    ];
  }

  private async step(what: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.logger.warn(`runs.sweep: ${what} failed: ${(err as Error).message}`);
    }
  }

  private async dispatchOrphans(): Promise<void> {
    const before = new Date(Date.now() - this.config.runs.dispatchGraceMs);
    const orphans = await this.records.queuedWithoutWorkerHost(before, BATCH);
    let enqueued = 0;
    for (const id of orphans) {
      if (await this.runQueue.ensureJob(id)) enqueued++;
    }
    if (enqueued) this.logger.log(`re-enqueued ${enqueued} queued run(s) that had no job`);
  }

  private async dispatchWaiting(): Promise<void> {
    let started = 0;
    let failed = 0;
    for (const teamId of await this.waitingTeamsInTurn()) {
      // One team whose dispatch keeps failing must not keep the teams after it waiting.
      try {
        started += await this.capacity.dispatchWaiting(teamId, { replaceLeftovers: true });
      } catch (err) {
        if (failed++ === 0) {
          this.logger.warn(
            `runs.sweep: dispatch for team ${teamId} failed: ${(err as Error).message}`,
          );
        }
      }
    }
    if (started) this.logger.log(`dispatched ${started} run(s) waiting for a free slot`);
    if (failed > 1) this.logger.warn(`runs.sweep: dispatch failed for ${failed} team(s) in all`);
  }

  /**
   * The next batch of teams with waiting runs, in turns by team id: after the last team of the
   * previous batch, and, past the last team of all, on from the first again (so each sweep looks
   * at a full batch while as many teams wait).
   */
  private async waitingTeamsInTurn(): Promise<string[]> {
    const after = this.waitingAfter;
    const teams = await this.capacity.teamsWaiting(BATCH, after);
    if (after !== undefined && teams.length < BATCH) {
      const wrapped = (await this.capacity.teamsWaiting(BATCH - teams.length)).filter(
        (id) => id <= after,
      );
      teams.push(...wrapped);
    }
    this.waitingAfter = teams.length === BATCH ? teams[teams.length - 1] : undefined;
    return teams;
  }

  private async recoverLapsedLeases(): Promise<void> {
    const lapsed = await this.records.lapsedLeases(new Date(), BATCH);
    for (const run of lapsed) {
      const guard = {
        sql: 'lease_owner = :owner AND lease_expires_at < :now',
        params: { owner: run.leaseOwner, now: new Date() },
      };
      const event = {
        executionId: run.executionCount,
        payload: { reason: 'worker_lost', worker_id: run.leaseOwner, attempt: run.attempt },
      };
      if (run.attempt < this.config.runs.maxAttempts) {
        const requeued = await this.transitions.transition(run.id, 'QUEUED', {
          from: ['CLAIMED', 'INPROGRESS'],
          set: { leaseOwner: null, leaseExpiresAt: null },
          where: guard,
        });
        if (requeued) {
          this.logger.warn(`run ${run.id}: worker ${run.leaseOwner} was lost; retrying`);
          if (run.workerHost) await this.runQueue.dispatch(run);
          else await this.runQueue.ensureJob(run.id);
        }
      } else {
        const message = `the worker executing this run stopped responding (attempt ${run.attempt} of ${this.config.runs.maxAttempts})`;
        await this.transitions.transition(run.id, 'ERROR', {
          from: ['CLAIMED', 'INPROGRESS'],
          set: {
            leaseOwner: null,
            leaseExpiresAt: null,
            finishedAt: new Date(),
            statusMessage: { message, error_code: 'internal_error', retryable: true },
          },
          where: guard,
          event,
        });
      }
    }
  }
}
