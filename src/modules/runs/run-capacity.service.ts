import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  DataSource,
  EntityManager,
  EntitySubscriberInterface,
  QueryRunner,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';
import { LimitsService, TEAM_SCOPE } from '../limits';
import { Run } from './entities/run.entity';
import { RunQueue } from './run-queue.service';
import { RunSlotRepository } from './run-slot.repository';
import { fullLimit, limitsConcurrency, runsToStart } from './run-slots';
import { RunTransitions } from './run-transitions.service';
import { RunChanges } from './live/run-changes.service';

/** How many waiting runs of a team one dispatch looks at (oldest first). */
const WAITING_WINDOW = 500;

/**
 * `max_concurrent_runs`: a slot is taken when a run is claimed (it leaves QUEUED, under a lock on
 * the limits rows, see `fullAtClaim`) and is free again as soon as the run leaves CLAIMED/INPROGRESS
 * (it is counted, not stored, so no path can leak one). A run that found no slot waits QUEUED
 * with `at_capacity` and no job; every transition out of a slot, on any replica, dispatches the
 * team's oldest waiting runs that fit, once its transaction has committed.
 */
@Injectable()
export class RunCapacity implements EntitySubscriberInterface {
  private readonly logger = new Logger('RunCapacity');
  /** Runs that left a slot in a transaction not committed yet: run id → team id, if known. */
  private readonly deferred = new WeakMap<QueryRunner, Map<string, string | null>>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly limits: LimitsService,
    private readonly queue: RunQueue,
    private readonly changes: RunChanges,
    private readonly slots: RunSlotRepository,
    transitions: RunTransitions,
  ) {
    dataSource.subscribers.push(this);
    transitions.onSlotReleased((runId, manager, teamId) => this.released(runId, manager, teamId));
    // A raised (or removed) limit frees slots too.
    limits.onChanged((teamId) => {
      this.dispatchWaiting(teamId).catch((err: Error) => {
        this.logger.warn(`waiting runs of team ${teamId} not dispatched: ${err.message}`);
      });
    });
  }

  /**
   * Whether a new run will wait for a slot: its team or agent already has as many runs queued or
   * running as it may run at once. A hint for the creation's answer; the claim decides.
   */
  async atCapacityOnCreate(
    run: Pick<Run, 'teamId' | 'executorId' | 'workerHost'>,
  ): Promise<boolean> {
    if (run.workerHost) return false;
    const limits = await this.limits.forRun(
      this.dataSource.manager,
      run.teamId,
      run.executorId,
      false,
    );
    if (!limitsConcurrency(limits)) return false;
    return fullLimit(limits, await this.slots.use(run, 'active', this.dataSource.manager)) !== null;
  }

  /**
   * Whether the run's team has a concurrency limit at all (read outside any transaction: a team
   * without one claims without locking anything).
   */
  async limited(run: Pick<Run, 'teamId' | 'executorId'>): Promise<boolean> {
    return limitsConcurrency(
      await this.limits.forRun(this.dataSource.manager, run.teamId, run.executorId, false),
    );
  }

  /**
   * In the claim's transaction, before anything else in it: locks the run's limits rows FOR
   * UPDATE, then counts the runs holding a slot. Claims of one team queue on that lock, and each
   * counts after the previous claim committed, so no two claims take one slot. The count is the
   * transaction's first plain read, so its snapshot is taken after the lock was granted.
   * Returns the limit that is full, or null when the run may take a slot.
   */
  async fullAtClaim(
    manager: EntityManager,
    run: Pick<Run, 'teamId' | 'executorId'>,
  ): Promise<'team' | 'agent' | null> {
    const limits = await this.limits.forRun(manager, run.teamId, run.executorId, true);
    if (!limitsConcurrency(limits)) return null;
    return fullLimit(limits, await this.slots.use(run, 'running', manager));
  }

  /** In the refused claim's transaction: the run waits, without a job, for a slot. */
  async markWaiting(
    manager: EntityManager,
    run: Pick<Run, 'id' | 'executionCount'>,
  ): Promise<void> {
    // Its page says why it waits (`at_capacity` on the run).
    if (await this.slots.markWaiting(manager, run)) this.changes.runChanged(run.id, manager);
  }

  /**
   * Dispatches the team's oldest waiting runs that fit in its free slots; returns how many were
   * enqueued. `replaceLeftovers` (the sweeper's safety net) goes through RunQueue.ensureJob, which
   * also replaces a job left with a run's id: a plain enqueue is a no-op then, and the run would
   * wait for good.
   */
  async dispatchWaiting(
    teamId: string,
    options: { replaceLeftovers?: boolean } = {},
  ): Promise<number> {
    if (!(await this.slots.anyWaiting(teamId))) return 0;
    const rows = await this.limits.allOf(teamId);
    const teamMax = rows.find((r) => r.agentUid === TEAM_SCOPE)?.maxConcurrentRuns ?? null;
    const agentMax = new Map<string, number>();
    for (const row of rows) {
      if (row.agentUid !== TEAM_SCOPE && row.maxConcurrentRuns !== null) {
        agentMax.set(row.agentUid, row.maxConcurrentRuns);
      }
    }
    const byAgent = await this.slots.runningByExecutor(teamId);
    const team = [...byAgent.values()].reduce((sum, n) => sum + n, 0);
    const waiting = await this.slots.queued(teamId, WAITING_WINDOW);
    const start = runsToStart(waiting, teamMax, agentMax, { team, byAgent });
    let enqueued = 0;
    for (const runId of start) {
      const added = options.replaceLeftovers
        ? await this.queue.ensureJob(runId)
        : await this.queue.enqueue(runId);
      if (added) enqueued++;
    }
    return enqueued;
  }

  /**
   * What counts against the team's `max_concurrent_runs` now: its runs holding a slot (claimed or
   * running on Ambient's own workers) and those waiting for one (`at_capacity`).
   */
  teamSlots(teamId: string): Promise<{ running: number; waiting: number }> {
    return this.slots.teamSlots(teamId);
  }

  /** Teams with runs waiting for a slot (the sweeper's safety net for a lost wake-up). */
  teamsWaiting(limit: number, after?: string): Promise<string[]> {
    return this.slots.teamsWaiting(limit, after);
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    if (event.queryRunner.isTransactionActive) return; // a savepoint: the outer commit decides
    const pending = this.deferred.get(event.queryRunner);
    this.deferred.delete(event.queryRunner);
    for (const [runId, teamId] of pending ?? []) void this.dispatchWaitingOf(runId, teamId);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) this.deferred.delete(event.queryRunner);
  }

  /** A run left a slot (or never held one); its team's waiting runs are looked at after commit. */
  private released(runId: string, manager: EntityManager, teamId: string | null): void {
    const queryRunner = manager.queryRunner;
    if (!queryRunner?.isTransactionActive) return void this.dispatchWaitingOf(runId, teamId);
    const pending = this.deferred.get(queryRunner) ?? new Map<string, string | null>();
    this.deferred.set(queryRunner, pending);
    pending.set(runId, teamId ?? pending.get(runId) ?? null);
  }

  /** dispatchWaiting for the run's team (read unless given); never throws. */
  async dispatchWaitingOf(runId: string, knownTeamId: string | null = null): Promise<void> {
    try {
      let teamId = knownTeamId;
      if (!teamId) teamId = await this.slots.teamOf(runId);
      if (teamId) await this.dispatchWaiting(teamId);
    } catch (err) {
      // The sweeper dispatches waiting runs too, a little later.
      this.logger.warn(`waiting runs not dispatched after run ${runId}: ${(err as Error).message}`);
    }
  }
}
