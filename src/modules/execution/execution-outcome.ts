import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ErrorCode, terminalStateFor } from '../../common/errors/error-codes';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { jsonColumn } from '../../database/json-column';
import type { Run } from '../runs';
import { RunFollowupsService, RunRecords, RunTransitions } from '../runs';
import { ExecutionFence } from './execution-fence';
import type { LeaseToken } from './execution-lease';
import { ExecutionUsage } from './execution-usage';
import type { HarnessResult } from './harness/harness.types';
import { FINISH_REQUESTED } from './remote/remote-execution.service';
import { idleDeadline, WorkspaceRetentionService } from './workspace/workspace-retention.service';

const MAX_STATUS_MESSAGE = 4000;

/** A harness result, or a failure before the harness started (environment setup). */
export type ExecutionResult = HarnessResult & { statusExtra?: Record<string, unknown> };

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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly records: RunRecords,
    private readonly transitions: RunTransitions,
    private readonly followups: RunFollowupsService,
    private readonly retention: WorkspaceRetentionService,
    private readonly usage: ExecutionUsage,
    private readonly fence: ExecutionFence,
  ) {}

  /**
   * The outcome the execution's own run-scoped key asked for through `finish-task`, if it did
   * (RemoteExecutionService.finish); it wins over however the harness ended (stopped for it).
   */
  async withFinishRequest(token: LeaseToken, result: ExecutionResult): Promise<ExecutionResult> {
    const { runId, executionId } = token;
    const [request] = (await this.dataSource.query(
      `SELECT payload FROM run_events WHERE run_id = ? AND execution_id = ? AND event_type = ?
        ORDER BY id DESC LIMIT 1`,
      [runId, executionId, FINISH_REQUESTED],
    )) as { payload: string | Record<string, unknown> | null }[];
    const payload = jsonColumn(request?.payload);
    if (!payload) return result;
    const { success, summary, error_code } = payload as {
      success: boolean;
      summary: string;
      error_code?: ErrorCode;
    };
    return {
      ...result,
      outcome: success ? 'succeeded' : 'failed',
      summary,
      errorCode: success ? undefined : error_code,
      statusExtra: undefined,
    };
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
    const message = result.summary.slice(0, MAX_STATUS_MESSAGE) || 'Done.';
    if (result.outcome === 'succeeded') {
      await this.end(run, token, 'SUCCEEDED', { message }, usage);
      return;
    }
    const code = result.errorCode ?? 'internal_error';
    await this.end(
      run,
      token,
      terminalStateFor(code),
      {
        message,
        error_code: code,
        retryable: code === 'resource_unavailable' || code === 'internal_error',
        ...result.statusExtra,
      },
      usage,
      // A failed setup already kept its workspace for the debug window, or deleted it.
      code !== 'environment_setup_failed',
    );
  }

  /** Ends the run with the execution's outcome; refused (and counted) once the token is stale. */
  async end(
    run: Run,
    token: LeaseToken,
    state: 'SUCCEEDED' | 'FAILED' | 'ERROR',
    statusMessage: NonNullable<Run['statusMessage']>,
    requestUsage?: Run['requestUsage'],
    keepWorkspace = true,
  ): Promise<void> {
    const ended = await this.transitions.transition(run.id, state, {
      from: ['CLAIMED', 'INPROGRESS'],
      set: {
        finishedAt: new Date(),
        statusMessage,
        leaseOwner: null,
        leaseExpiresAt: null,
        ...(requestUsage ? { requestUsage } : {}),
        // Set with the end, so no follow-up can see the run ended without its deadline.
        ...(keepWorkspace
          ? this.retention.keepUntil(idleDeadline(run.config.idle_timeout_minutes))
          : {}),
      },
      where: ExecutionFence.transitionGuard(token),
      event: { executionId: token.executionId, payload: { ...statusMessage } },
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

  /** Follow-ups arrived as the execution ended: true when the run went back to the queue. */
  async requeueForFollowups(runId: string): Promise<boolean> {
    if (!(await this.followups.hasUndelivered(runId))) return false;
    return this.followups.requeueEnded(runId);
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
