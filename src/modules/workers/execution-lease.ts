import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { hostname } from 'node:os';
import { DataSource, EntityManager } from 'typeorm';
import { newUid } from '../../common/ids';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import type { Run } from '../runs';
import { RunLookupRepository, RunLeaseRepository, RunTransitions, RunCapacity } from '../runs';
import { ExecutionFence, ExecutionToken } from './execution-fence';

/** The token of an execution on this worker: the lease is this process's worker id. */
export type LeaseToken = ExecutionToken & { holder: { lease: string } };

/** A lease kept while an execution works; `stop` when it has ended. */
export interface HeldLease {
  /** The harness is done and the execution is recording its end (which releases the lease). */
  ending(): void;
  stop(): void;
}

/**
 * The lease of this worker's executions: the guarded claim (QUEUED through CLAIMED to INPROGRESS
 * with a new execution id) and the heartbeat that renews it. A worker that dies stops renewing and the
 * recovery sweeper takes the run back.
 */
@Injectable()
export class ExecutionLeases {
  private readonly logger = new Logger('ExecutionLeases');
  readonly workerId = `${hostname()}:${process.pid}:${newUid(6)}`;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly runLookup: RunLookupRepository,
    private readonly leases: RunLeaseRepository,
    private readonly transitions: RunTransitions,
    private readonly fence: ExecutionFence,
    private readonly capacity: RunCapacity,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /**
   * Claims a queued run for this worker and starts it (one UPDATE through CLAIMED to INPROGRESS,
   * both timeline events, in one transaction); null when it is not ours to execute or someone won,
   * `at_capacity` when its team (or agent) has no free concurrency slot: the run then waits,
   * marked, for a slot to free (RunCapacity dispatches it). Returns the run as it is now.
   */
  async claim(runId: string): Promise<Run | null | 'at_capacity'> {
    const run = await this.runLookup.find(runId);
    // A self-hosted run is executed by its team's own worker, never here.
    if (!run || run.state !== 'QUEUED' || run.workerHost) return null;
    const limited = await this.capacity.limited(run);
    return this.dataSource.transaction(async (manager) => {
      // First in the transaction: the slot count must be read after the limits lock is held.
      if (limited && (await this.capacity.fullAtClaim(manager, run))) {
        await this.capacity.markWaiting(manager, run);
        return 'at_capacity' as const;
      }
      return this.claimAndStart(run, manager);
    });
  }

  private async claimAndStart(run: Run, manager: EntityManager): Promise<Run | null> {
    const executionId = run.executionCount + 1;
    const attempt = run.attempt + 1;
    const startedAt = run.startedAt ?? new Date();
    // One UPDATE from QUEUED through CLAIMED to INPROGRESS, guarded by the execution count seen:
    // a claim that lost to another worker (or to a cancel) changes nothing.
    const started = await this.transitions.transition(
      run.id,
      'INPROGRESS',
      {
        from: ['QUEUED'],
        via: {
          state: 'CLAIMED',
          event: { executionId, payload: { worker_id: this.workerId, attempt } },
        },
        set: {
          atCapacity: false,
          leaseOwner: this.workerId,
          leaseExpiresAt: new Date(Date.now() + this.config.runs.leaseMs),
          executionCount: executionId,
          attempt,
          startedAt,
        },
        where: { sql: 'execution_count = :seen', params: { seen: run.executionCount } },
        event: { executionId, payload: { harness: run.config.harness?.type ?? 'oz' } },
        moved: { ...run, executionCount: executionId, startedAt },
      },
      manager,
    );
    if (!started) return null;
    return {
      ...run,
      state: 'INPROGRESS',
      executionCount: executionId,
      attempt,
      atCapacity: false,
      leaseOwner: this.workerId,
      startedAt,
    };
  }

  /** Renews the token's lease every third of its length until stopped. */
  hold(token: LeaseToken, controller: AbortController): HeldLease {
    const state = { renewedAt: Date.now(), ending: false };
    const heartbeat = setInterval(
      () => void this.renew(token, state, controller),
      Math.max(100, Math.floor(this.config.runs.leaseMs / 3)),
    );
    return {
      ending: () => {
        state.ending = true;
      },
      stop: () => clearInterval(heartbeat),
    };
  }

  /**
   * Renews the lease (guarded by the token). Renewal failing for longer than a third of the
   * lease aborts the execution while the lease still holds, i.e. before the sweeper may give the
   * run to another worker; a process frozen past its lease finds the run taken here, or at its
   * next fenced write, whichever comes first.
   */
  private async renew(
    token: LeaseToken,
    state: { renewedAt: number; ending: boolean },
    controller: AbortController,
  ): Promise<void> {
    if (controller.signal.aborted) return;
    const { leaseMs } = this.config.runs;
    const sentAt = Date.now();
    if (sentAt - state.renewedAt >= (2 * leaseMs) / 3) {
      this.logger.warn(
        `run ${token.runId}: lease not renewed for ${sentAt - state.renewedAt} ms; stopping execution ${token.executionId}`,
      );
      controller.abort('lost');
      // Counted and logged as stale when another execution has the run already (a frozen process).
      await this.fence.check(token, 'lease').catch(() => undefined);
      return;
    }
    try {
      const renewed = await this.leases.renewLease(
        token.runId,
        token.holder.lease,
        new Date(sentAt + leaseMs),
        token.executionId,
      );
      if (renewed) {
        state.renewedAt = Math.max(state.renewedAt, sentAt);
      } else if (!controller.signal.aborted && !state.ending) {
        // Cancelled, or taken back after we looked dead: stop working on it. (An execution that
        // is ending released the lease itself; its end's guarded transition speaks for it.)
        this.fence.refused(token, 'lease');
      }
    } catch (err) {
      this.logger.warn(`lease renewal for run ${token.runId} failed: ${(err as Error).message}`);
    }
  }
}
