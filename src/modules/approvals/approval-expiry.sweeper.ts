import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PeriodicSweeper } from '../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { BlockedRunRepository, RunApprovalRequests, RunTransitions } from '../runs';
import type { ApprovalDecider } from '../runs';

const BATCH = 100;
/** Ambient itself, deciding what nobody decided in time. */
const TIMEOUT_DECIDER: ApprovalDecider = { type: 'system', id: null, name: 'Ambient' };

/**
 * Fails BLOCKED runs that waited longer than AMBIENT_BLOCKED_TIMEOUT for a decision (worker role;
 * safe in every replica: each run is failed under its row lock by a guarded transition, so of two
 * replicas sweeping at once one fails it and the other finds it FAILED). Its undecided requests
 * are denied by Ambient in the same transaction, so the inbox no longer lists them and a later
 * follow-up continues the run with the agent told that nobody approved.
 */
@Injectable()
export class ApprovalExpirySweeper extends PeriodicSweeper {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly requests: RunApprovalRequests,
    private readonly blockedRuns: BlockedRunRepository,
    private readonly transitions: RunTransitions,
    registry: SchedulerRegistry,
  ) {
    super({
      name: 'approvals.expiry',
      // A quarter of the timeout, between 0.5 s and a minute: a run fails at most that late.
      intervalMs: Math.min(60_000, Math.max(500, config.runs.blockedTimeoutSeconds * 250)),
      logger: new Logger('ApprovalExpiry'),
      registry,
      swept: (failed) => `${failed} blocked run(s) failed with approval_timeout`,
    });
  }

  private get timeoutMs(): number {
    return this.config.runs.blockedTimeoutSeconds * 1000;
  }

  /** Fails the runs blocked since before the timeout; returns how many it failed. */
  async sweep(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.timeoutMs);
    const due = await this.blockedRuns.blockedBefore(cutoff, BATCH);
    let failed = 0;
    for (const id of due) {
      if (await this.expire(id, cutoff)) failed++;
    }
    return failed;
  }

  private expire(runId: string, cutoff: Date): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const run = await this.blockedRuns.lock(manager, runId);
      if (run?.state !== 'BLOCKED') return false;
      const oldest = await this.blockedRuns.oldestUndecidedAt(manager, runId);
      // Decided and blocked again since the sweep's read: its new request has its own time.
      if ((oldest ?? run.updatedAt) >= cutoff) return false;
      const waited = describeDuration(this.timeoutMs);
      const denied = await this.requests.decidePending(manager, runId, () => ({
        decision: 'deny',
        comment: `nobody decided within ${waited} (AMBIENT_BLOCKED_TIMEOUT)`,
        by: TIMEOUT_DECIDER,
      }));
      const pending = denied.map((request) => request.summary).join('; ');
      return this.transitions.transition(
        runId,
        'FAILED',
        {
          from: ['BLOCKED'],
          set: {
            finishedAt: new Date(),
            leaseOwner: null,
            leaseExpiresAt: null,
            statusMessage: {
              message:
                `No decision within ${waited}` +
                (pending ? ` on: ${pending}` : '') +
                '. Send a follow-up to continue the run.',
              error_code: 'approval_timeout',
              retryable: false,
            },
          },
          event: {
            payload: {
              reason: 'approval_timeout',
              blocked_timeout_seconds: this.config.runs.blockedTimeoutSeconds,
              denied_approval_ids: denied.map((request) => request.id),
            },
          },
        },
        manager,
      );
    });
  }
}

/** 86 400 000 → "24h", 5 400 000 → "1h30m", 2000 → "2s": a timeout as people read it. */
export function describeDuration(ms: number): string {
  if (ms < 60_000) return `${ms / 1000}s`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return [hours && `${hours}h`, minutes && `${minutes}m`, seconds && `${seconds}s`]
    .filter(Boolean)
    .join('');
}
