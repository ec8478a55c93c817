import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import type { Run } from '../runs';
import {
  RunFollowupsService,
  KeptWorkspaceRepository,
  RunTransitions,
  RunEventRepository,
} from '../runs';
import { RunBlocking } from './approvals/run-blocking';
import { ExecutionEnds } from './execution-ends';
import { ExecutionFence } from './execution-fence';
import type { LeaseToken } from './execution-lease';
import { ExecutionResult, FinishReport, finishOutcome, runEndStatus } from './execution-result';
import { ExecutionUsage } from './execution-usage';
import { FINISH_REQUESTED } from './remote/remote-execution.service';
import { idleDeadline, WorkspaceRetentionService } from './workspace/workspace-retention.service';

/**
 * How an execution's end is recorded: the run's end state and status message with its usage,
 * the workspace kept for follow-ups, or the run handed back to the queue (shutdown, a lost
 * connection). Every write is guarded by the execution's token.
 */
@Injectable()
export class ExecutionOutcomes {
  private readonly logger = new Logger('ExecutionOutcomes');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: RunEventRepository,
    private readonly records: KeptWorkspaceRepository,
    private readonly transitions: RunTransitions,
    private readonly followups: RunFollowupsService,
    private readonly retention: WorkspaceRetentionService,
    private readonly usage: ExecutionUsage,
    private readonly fence: ExecutionFence,
    private readonly blocking: RunBlocking,
    private readonly ends: ExecutionEnds,
  ) {}

  /**
   * The outcome the execution's own run-scoped key asked for through `finish-task`, if it did
   * (RemoteExecutionService.finish); it wins over however the harness ended (stopped for it).
   */
  async withFinishRequest(token: LeaseToken, result: ExecutionResult): Promise<ExecutionResult> {
    const { runId, executionId } = token;
    const payload = await this.events.latestPayload(runId, executionId, FINISH_REQUESTED);
    if (!payload) return result;
    const asked = payload as Pick<FinishReport, 'success' | 'summary' | 'error_code'>;
    return { ...result, ...finishOutcome(asked), statusExtra: undefined };
  }

  /** Records how the execution ended (the harness's result) and what it cost. */
  async record(
    run: Run,
    token: LeaseToken,
    result: ExecutionResult,
    elapsedMs: number,
    signal: AbortSignal,
  ): Promise<void> {
    const usage = this.usage.add(run, result.usage, elapsedMs);
    if (result.outcome === 'cancelled') {
      if (signal.reason === 'shutdown') {
        await this.release(run, token, usage);
      } else if (await this.transitions.recordCancelledUsage(token, usage)) {
        // Cancelled at this execution by whoever aborted us: keep what it cost, and the workspace.
        await this.keepCancelledWorkspace(run, token);
      } else if (signal.reason === 'lost') {
        // The lease could not be renewed in time: give the run back at once while this execution
        // still holds it (the guard refuses it otherwise); what it cost is not kept.
        await this.handBack(run, token);
      }
      return;
    }
    if (result.outcome === 'blocked' && result.pending) {
      await this.blocking.block(run, token, result.pending, usage);
      return;
    }
    const { state, statusMessage } = runEndStatus(result);
    // A failed setup already kept its workspace for the debug window, or deleted it.
    const keepWorkspace = statusMessage.error_code !== 'environment_setup_failed';
    await this.end(run, token, state, statusMessage, usage, keepWorkspace);
  }

  /**
   * Ends the run with the execution's outcome (ExecutionEnds), its workspace kept for follow-ups
   * unless told otherwise; refused (and counted) once the token is stale.
   */
  async end(
    run: Run,
    token: LeaseToken,
    state: 'SUCCEEDED' | 'FAILED' | 'ERROR',
    statusMessage: NonNullable<Run['statusMessage']>,
    requestUsage?: Run['requestUsage'],
    keepWorkspace = true,
  ): Promise<void> {
    const ended = await this.ends.end(run, token, {
      state,
      statusMessage,
      ...(requestUsage ? { requestUsage } : {}),
      // Set with the end, so no follow-up can see the run ended without its deadline.
      ...(keepWorkspace
        ? { alsoSet: this.retention.keepUntil(idleDeadline(run.config.idle_timeout_minutes)) }
        : {}),
      moved: {
        ...run,
        executionCount: token.executionId,
        statusMessage,
        requestUsage: requestUsage ?? run.requestUsage,
      },
    });
    if (!ended) await this.fence.check(token, 'state');
    if (ended && keepWorkspace) await this.releaseAtOnceIfIdleIsZero(run);
  }

  /** A cancelled execution's workspace is kept for follow-ups like any other ended one. */
  async keepCancelledWorkspace(run: Run, token: LeaseToken): Promise<void> {
    const kept = await this.records.keepCancelledWorkspace(
      run.id,
      token.executionId,
      idleDeadline(run.config.idle_timeout_minutes),
      this.retention.volume,
    );
    if (kept) await this.releaseAtOnceIfIdleIsZero(run);
  }

  /**
   * An execution interrupted by a lost MySQL/Redis connection: back to QUEUED while attempts
   * remain (the dispatch sweeper enqueues it again), else ERROR as after a dead worker.
   */
  async handBack(run: Run, token: LeaseToken): Promise<void> {
    if (run.attempt < this.config.runs.maxAttempts) {
      await this.transitions.transition(run.id, 'QUEUED', {
        from: ['CLAIMED', 'INPROGRESS'],
        set: { leaseOwner: null, leaseExpiresAt: null },
        where: ExecutionFence.transitionGuard(token),
      });
      return;
    }
    await this.end(run, token, 'ERROR', {
      message: 'the execution lost its connection to the database or queue too many times',
      error_code: 'internal_error',
      retryable: true,
    });
  }

  /**
   * Follow-ups arrived as the execution ended: true when the run went back to the queue. Not a
   * BLOCKED run: it waits for its decision, and the execution that resumes it takes them.
   */
  async requeueForFollowups(runId: string): Promise<boolean> {
    if (!(await this.followups.hasUndelivered(runId))) return false;
    return this.followups.requeueEnded(runId, ['SUCCEEDED', 'FAILED', 'ERROR']);
  }

  /** `idle_timeout_minutes: 0`: the workspace goes now, not at the next sweep. */
  private async releaseAtOnceIfIdleIsZero(run: Run): Promise<void> {
    if (run.config.idle_timeout_minutes !== 0) return;
    await this.retention.releaseIfExpired(run.id).catch((err: Error) => {
      this.logger.warn(`could not release the workspace of run ${run.id}: ${err.message}`);
    });
  }

  /** Graceful shutdown: give the run back to the queue without counting the attempt. */
  private async release(
    run: Run,
    token: LeaseToken,
    requestUsage: Run['requestUsage'],
  ): Promise<void> {
    await this.transitions.transition(run.id, 'QUEUED', {
      from: ['CLAIMED', 'INPROGRESS'],
      set: { leaseOwner: null, leaseExpiresAt: null, attempt: run.attempt - 1, requestUsage },
      where: ExecutionFence.transitionGuard(token),
    });
  }
}
