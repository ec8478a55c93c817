import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import type { Run } from '../../runs';
import {
  RunFollowupsService,
  RunKeysService,
  RunQueue,
  RunLookupRepository,
  RunLeaseRepository,
  RunTransitions,
} from '../../runs';
import type { StatusMessage } from '../../run-config';
import { ExecutionEnds, RunEnd } from '../execution-ends';
import type { LeaseToken } from '../execution-lease';
import { runEndStatus } from '../execution-result';

const BATCH = 200;

/** A run offered to one worker connection: the lease it holds and the key it reports with. */
export interface Offer {
  runId: string;
  executionId: number;
  keyId: string;
  leaseOwner: string;
  key: string;
}

/** What a worker said about the end of an execution over the websocket. */
export type WorkerReport =
  | { kind: 'completed'; message?: string; taskState?: string }
  | { kind: 'failed'; message?: string; failureCause?: string; failureReason?: string };

/**
 * The database side of self-hosted execution. Every step is a guarded transition keyed by the
 * execution's lease owner (`key:<run key id>`), so replicas and late messages cannot collide:
 * QUEUED →(offer) PENDING →(claim) CLAIMED → INPROGRESS → ended, and PENDING → QUEUED when an
 * offer is rejected, unanswered or its connection closes.
 */
@Injectable()
export class SelfHostedRuns {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly runLookup: RunLookupRepository,
    private readonly leases: RunLeaseRepository,
    private readonly transitions: RunTransitions,
    private readonly runKeys: RunKeysService,
    private readonly followups: RunFollowupsService,
    private readonly queue: RunQueue,
    private readonly ends: ExecutionEnds,
  ) {}

  /** The team's runs waiting for this worker host, oldest first. */
  queued(teamId: string, workerHost: string, limit: number): Promise<Run[]> {
    return this.leases.queuedForWorkerHost(teamId, workerHost, limit);
  }

  /**
   * QUEUED → PENDING for one connection, with a run-scoped key naming the connection's worker
   * credential (revoking it revokes the key); null when someone else won.
   */
  async offer(run: Run, workerCredentialId: string): Promise<Offer | null> {
    const { keyId, leaseOwner } = RunKeysService.newLease();
    const offered = await this.transitions.transition(run.id, 'PENDING', {
      from: ['QUEUED'],
      set: {
        leaseOwner,
        leaseExpiresAt: new Date(Date.now() + this.config.runs.leaseMs),
        // The claim timeout counts from the first offer, not from the latest rejection.
        unclaimedSince: run.unclaimedSince ?? run.updatedAt,
      },
      where: {
        sql: 'execution_count = :seen AND worker_host = :host',
        params: { seen: run.executionCount, host: run.workerHost },
      },
    });
    if (!offered) return null;
    const executionId = run.executionCount + 1;
    try {
      const key = await this.runKeys.issue(run, executionId, keyId, workerCredentialId);
      return { runId: run.id, executionId, keyId, leaseOwner, key };
    } catch (err) {
      await this.withdrawOffer(run.id, leaseOwner);
      throw err;
    }
  }

  /** An offer nobody took (rejected, unanswered, its connection gone): the run waits again. */
  async withdrawOffer(runId: string, leaseOwner: string): Promise<boolean> {
    const withdrawn = await this.transitions.transition(runId, 'QUEUED', {
      from: ['PENDING'],
      set: { leaseOwner: null, leaseExpiresAt: null },
      where: { sql: 'lease_owner = :owner', params: { owner: leaseOwner } },
    });
    await this.revokeKeyOf(leaseOwner);
    return withdrawn;
  }

  /**
   * The worker took the offer (`task_claimed`, or its first report): PENDING → CLAIMED with a new
   * execution and attempt. True when this lease holds the run afterwards.
   */
  async claim(runId: string, leaseOwner: string): Promise<boolean> {
    const run = await this.runLookup.find(runId);
    if (!run || run.leaseOwner !== leaseOwner) return false;
    if (run.state !== 'PENDING') return run.state === 'CLAIMED' || run.state === 'INPROGRESS';
    const executionId = run.executionCount + 1;
    const claimed = await this.transitions.transition(runId, 'CLAIMED', {
      from: ['PENDING'],
      set: {
        executionCount: executionId,
        attempt: run.attempt + 1,
        leaseExpiresAt: new Date(Date.now() + this.config.runs.leaseMs),
        unclaimedSince: null,
      },
      where: {
        sql: 'lease_owner = :owner AND execution_count = :seen',
        params: { owner: leaseOwner, seen: run.executionCount },
      },
      event: {
        executionId,
        payload: { worker_id: run.workerHost, self_hosted: true, attempt: run.attempt + 1 },
      },
    });
    return claimed || this.leases.leaseHolds(runId, leaseOwner);
  }

  /**
   * Ends the execution holding `leaseOwner` (ExecutionEnds) and revokes its key; follow-ups that
   * arrived meanwhile start the next execution at once. False when the lease was no longer held
   * (someone ended it first). `run` is as read since its claim: its execution is the lease's.
   */
  async end(run: Run, leaseOwner: string, end: RunEnd): Promise<boolean> {
    const ended = await this.ends.end(run, SelfHostedRuns.tokenOf(run, leaseOwner), end);
    await this.revokeKeyOf(leaseOwner);
    if (ended && (await this.followups.hasUndelivered(run.id))) {
      await this.followups.startContinuation(run.id);
    }
    return ended;
  }

  /**
   * The worker's own end signal (`task_completed` / `task_failed`). When the execution already
   * finished the run through the run-scoped API this changes nothing (finalisation is idempotent);
   * otherwise it ends the run, or hands it back to the queue when the worker was shut down.
   */
  async applyWorkerReport(runId: string, leaseOwner: string, report: WorkerReport): Promise<void> {
    const run = await this.runLookup.find(runId);
    if (!run || run.leaseOwner !== leaseOwner) return this.revokeKeyOf(leaseOwner);
    if (run.state === 'PENDING') {
      await this.withdrawOffer(runId, leaseOwner);
      await this.queue.dispatch(run);
      return;
    }
    if (report.kind === 'completed') {
      const message = report.message || 'Task completed successfully';
      const end: RunEnd =
        report.taskState === 'CANCELLED'
          ? { state: 'CANCELLED', statusMessage: { message } }
          : runEndStatus({ outcome: 'succeeded', summary: message });
      await this.end(run, leaseOwner, end);
      return;
    }
    if (
      report.failureCause === 'operator_shutdown' ||
      report.failureReason === 'graceful_shutdown'
    ) {
      await this.handBack(run, leaseOwner);
      return;
    }
    const errorCode = report.failureCause === 'user_error' ? 'invalid_request' : 'internal_error';
    const summary = report.message || `the self-hosted worker "${run.workerHost}" failed the task`;
    await this.end(run, leaseOwner, runEndStatus({ outcome: 'failed', errorCode, summary }));
  }

  /** The fencing token of the execution a self-hosted lease holds: its key is its lease. */
  static tokenOf(run: Pick<Run, 'id' | 'executionCount'>, leaseOwner: string): LeaseToken {
    return { runId: run.id, executionId: run.executionCount, holder: { lease: leaseOwner } };
  }

  /** A worker shutting down gives the run back without counting the attempt, like ours do. */
  private async handBack(run: Run, leaseOwner: string): Promise<void> {
    const released = await this.transitions.transition(run.id, 'QUEUED', {
      from: ['CLAIMED', 'INPROGRESS'],
      set: { leaseOwner: null, leaseExpiresAt: null, attempt: Math.max(0, run.attempt - 1) },
      where: { sql: 'lease_owner = :owner', params: { owner: leaseOwner } },
    });
    await this.revokeKeyOf(leaseOwner);
    if (released) await this.queue.dispatch(run);
  }

  /** Offers whose worker never answered within a lease go back to the queue. */
  async withdrawLapsedOffers(): Promise<Run[]> {
    const lapsed = await this.leases.lapsedOffers(new Date(), BATCH);
    const withdrawn: Run[] = [];
    for (const run of lapsed) {
      if (run.leaseOwner && (await this.withdrawOffer(run.id, run.leaseOwner))) withdrawn.push(run);
    }
    return withdrawn;
  }

  /** Runs no worker claimed within the claim timeout end in ERROR, saying why. */
  async failUnclaimed(): Promise<number> {
    const timeoutMs = this.config.selfHosted.claimTimeoutMs;
    const before = new Date(Date.now() - timeoutMs);
    const unclaimed = await this.leases.unclaimedSince(before, BATCH);
    let failed = 0;
    for (const run of unclaimed) {
      const statusMessage: StatusMessage = {
        message:
          `no self-hosted worker "${run.workerHost}" of this team claimed the run within ` +
          `${describeDuration(timeoutMs)}; start one with --worker-id ${run.workerHost}, or omit ` +
          `config.worker_host to run on Ambient's own workers`,
        error_code: 'resource_unavailable',
        retryable: true,
      };
      const ended = await this.transitions.transition(run.id, 'ERROR', {
        from: ['QUEUED'],
        set: { finishedAt: new Date(), statusMessage, unclaimedSince: null },
        where: { sql: 'COALESCE(unclaimed_since, updated_at) < :before', params: { before } },
        event: { payload: { ...statusMessage } },
      });
      if (ended) failed++;
    }
    return failed;
  }

  private async revokeKeyOf(leaseOwner: string): Promise<void> {
    const keyId = RunKeysService.keyIdOf(leaseOwner);
    if (keyId) await this.runKeys.revoke(keyId);
  }
}

/** "10 minutes", "90 seconds", "1.5 seconds". */
export function describeDuration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} minute${ms === 60_000 ? '' : 's'}`;
  if (ms % 1000 === 0) return `${ms / 1000} second${ms === 1000 ? '' : 's'}`;
  return `${ms / 1000} seconds`;
}
