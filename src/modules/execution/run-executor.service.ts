import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { DataSource } from 'typeorm';
import { ErrorCode, terminalStateFor } from '../../common/errors/error-codes';
import { isBackingServiceUnavailable } from '../../common/errors/unavailable';
import { newUid } from '../../common/ids';
import { RUN_ID, withSpan } from '../../common/tracing';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { TranscriptWriter } from '../conversations/transcript-writer.service';
import { idleDeadline, WorkspaceRetentionService } from './workspace/workspace-retention.service';
import { RunSecretsService } from './execution-secrets.service';
import { WorkspaceSetupService } from './workspace/workspace-setup.service';
import { HarnessRegistry } from '../../extensions/harness-registry';
import { HarnessResult } from './harness/harness.types';
import { WorkspaceService } from './workspace/workspace.service';
import { reportingLimits } from './sandbox/reporting-limits';
import { SandboxService } from './sandbox/sandbox.service';
import { Sandbox, SandboxError } from './sandbox/sandbox.types';
import { ModelsService } from '../models/models.service';
import { Run } from '../runs/entities/run.entity';
import { RunEvent } from '../runs/entities/run-event.entity';
import { RunFollowupsService } from '../runs/run-followups.service';
import { RunSignals } from '../runs/run-signals.service';
import { RunTransitions } from '../runs/run-transitions.service';
import { McpSecretError } from '../secrets/mcp-secrets.service';
import type { ExecutionConfig } from '../runs/run.types';
import { ExecutionContextFactory, internalApiUrl } from './execution-context.factory';
import { ExecutionFence, ExecutionToken, StaleExecutionError } from './execution-fence';
import { FINISH_REQUESTED } from './remote/remote-execution.service';
import { addUsage, inferenceCostUsd } from './run-usage';
import { withLogBindings } from '../../common/logging/log-bindings';
import { AmbientMetrics } from '../metrics/ambient-metrics';

const MAX_STATUS_MESSAGE = 4000;

/** `lost`: the execution no longer holds its run (or could not renew its lease in time). */
export type AbortReason = 'cancelled' | 'lost' | 'shutdown' | 'finished';

/** The token of an execution on this worker: the lease is this process's worker id. */
type LeaseToken = ExecutionToken & { holder: { lease: string } };

interface LeaseState {
  /** When the last renewal that took effect was sent (the lease holds leaseMs from then). */
  renewedAt: number;
  /** The harness is done and the execution is recording its end. */
  ending: boolean;
}

/** A harness result, or a failure before the harness started (environment setup). */
type ExecutionResult = HarnessResult & { statusExtra?: Record<string, unknown> };

export interface ExecuteOutcome {
  /** Follow-ups arrived as the execution ended: the run must be enqueued again once this job is done. */
  requeue: boolean;
}

/**
 * Executes one claimed run: claim (QUEUED→CLAIMED, guarded), keep a lease while working,
 * INPROGRESS, run the harness, record the outcome. A worker that dies stops renewing its lease
 * and the recovery sweeper takes the run back.
 */
@Injectable()
export class RunExecutor {
  private readonly logger = new Logger('RunExecutor');
  readonly workerId = `${hostname()}:${process.pid}:${newUid(6)}`;
  private readonly inFlight = new Map<string, AbortController>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transitions: RunTransitions,
    private readonly signals: RunSignals,
    private readonly followups: RunFollowupsService,
    private readonly harnesses: HarnessRegistry,
    private readonly models: ModelsService,
    private readonly contexts: ExecutionContextFactory,
    private readonly workspaceSetup: WorkspaceSetupService,
    private readonly retention: WorkspaceRetentionService,
    private readonly runSecrets: RunSecretsService,
    private readonly transcripts: TranscriptWriter,
    private readonly sandboxes: SandboxService,
    private readonly workspaces: WorkspaceService,
    private readonly metrics: AmbientMetrics,
    private readonly fence: ExecutionFence,
  ) {}

  get activeCount(): number {
    return this.inFlight.size;
  }

  /** Aborts every execution of this process; their runs go back to the queue for another worker. */
  abortAll(reason: AbortReason): void {
    for (const controller of this.inFlight.values()) controller.abort(reason);
  }

  /** Everything logged while the run executes (here, in the harness, the sandbox) has its run_id. */
  execute(runId: string): Promise<ExecuteOutcome> {
    return withLogBindings({ run_id: runId }, () => this.executeClaimed(runId));
  }

  private async executeClaimed(runId: string): Promise<ExecuteOutcome> {
    const run = await this.claim(runId);
    if (!run) return { requeue: false };
    const executionId = run.executionCount;
    const controller = new AbortController();
    const token: LeaseToken = {
      runId,
      executionId,
      holder: { lease: this.workerId },
      onStale: () => controller.abort('lost'),
    };
    this.inFlight.set(runId, controller);
    const stopListening = await this.signals
      .onCancel(runId, () => controller.abort('cancelled'))
      .catch(() => () => undefined);
    const stopListeningForFinish = await this.signals
      .onFinish(runId, () => controller.abort('finished'))
      .catch(() => () => undefined);
    const lease: LeaseState = { renewedAt: Date.now(), ending: false };
    const heartbeat = setInterval(
      () => void this.renewLease(token, lease, controller),
      Math.max(100, Math.floor(this.config.runs.leaseMs / 3)),
    );
    const startedAt = Date.now();
    try {
      const started = await this.transitions.transition(runId, 'INPROGRESS', {
        from: ['CLAIMED'],
        set: { startedAt: run.startedAt ?? new Date(startedAt) },
        where: ExecutionFence.transitionGuard(token),
        event: { executionId, payload: { harness: run.config.harness?.type ?? 'oz' } },
      });
      if (!started) return { requeue: false };
      const harnessResult = await withSpan(
        'run execution',
        {
          attributes: {
            [RUN_ID]: runId,
            'ambient.execution_id': executionId,
            'ambient.harness': run.config.harness?.type ?? 'oz',
            'ambient.model_id': run.modelId ?? this.models.catalog.defaultModelId,
          },
        },
        async (span) => {
          const result = await this.runHarness(run, token, controller.signal);
          span.setAttributes({
            'ambient.outcome': result.outcome,
            'gen_ai.usage.input_tokens': result.usage.promptTokens,
            'gen_ai.usage.output_tokens': result.usage.completionTokens,
          });
          return result;
        },
      );
      // From here the execution records its end, which releases the lease itself.
      lease.ending = true;
      const result =
        controller.signal.reason === 'cancelled'
          ? harnessResult
          : await this.withFinishRequest(runId, executionId, harnessResult);
      await this.writeTranscript(token, result.rawTranscript);
      await this.finish(run, token, result, Date.now() - startedAt, controller.signal);
    } catch (err) {
      lease.ending = true;
      if (err instanceof StaleExecutionError || controller.signal.reason === 'lost') {
        // Another execution holds the run now (or may soon): this one writes nothing more. A
        // cancel also makes the token stale: that run's workspace is still kept (guarded).
        this.logger.warn(
          `run ${runId}: execution ${executionId} stopped: ${(err as Error).message}`,
        );
        await this.keepCancelledWorkspace(run, token).catch(() => undefined);
        return { requeue: false };
      }
      if (isBackingServiceUnavailable(err)) {
        // MySQL or Redis went away under the execution: nothing is wrong with the run. It goes
        // back to the queue (the attempt counts, as when a worker dies), or, if MySQL is still
        // gone, its lease lapses and the sweeper recovers it the same way.
        this.logger.warn(
          `run ${runId} interrupted by a lost connection: ${(err as Error).message}`,
        );
        await this.handBack(run, token).catch((again: Error) => {
          this.logger.warn(`run ${runId} left to the sweeper: ${again.message}`);
        });
        return { requeue: false };
      }
      this.logger.error(`run ${runId} failed unexpectedly: ${(err as Error).stack ?? err}`);
      await this.end(run, token, 'ERROR', {
        message: `internal error while executing the run: ${(err as Error).message}`,
        error_code: 'internal_error',
        retryable: true,
      }).catch((again: Error) => {
        this.logger.warn(`run ${runId} not ended: ${again.message}`);
      });
    } finally {
      clearInterval(heartbeat);
      stopListening();
      stopListeningForFinish();
      this.inFlight.delete(runId);
    }
    return { requeue: await this.requeueForFollowups(runId) };
  }

  /**
   * The outcome the execution's own run-scoped key asked for through `finish-task`, if it did
   * (RemoteExecutionService.finish); it wins over however the harness ended (stopped for it).
   */
  private async withFinishRequest(
    runId: string,
    executionId: number,
    result: ExecutionResult,
  ): Promise<ExecutionResult> {
    const request = await this.dataSource.getRepository(RunEvent).findOne({
      where: { runId, executionId, eventType: FINISH_REQUESTED },
      order: { id: 'DESC' },
    });
    if (!request?.payload) return result;
    const { success, summary, error_code } = request.payload as {
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

  /**
   * The transcript is written before the run ends, so a finished run always has it; only while
   * the execution still holds the run, or was cancelled holding it (blobs cannot share the row
   * lock, so this is a check).
   */
  private async writeTranscript(token: LeaseToken, rawStream: string | undefined): Promise<void> {
    const { runId, executionId } = token;
    await this.fence.check(token, 'transcript', { orCancelledHere: true });
    const raw = rawStream === undefined ? undefined : { executionId, stream: rawStream };
    await this.transcripts.write(runId, raw).catch((err: Error) => {
      this.logger.warn(`could not write the transcript of run ${runId}: ${err.message}`);
    });
  }

  private async claim(runId: string): Promise<Run | null> {
    const run = await this.dataSource.getRepository(Run).findOneBy({ id: runId });
    // A self-hosted run is executed by its team's own worker, never here.
    if (!run || run.state !== 'QUEUED' || run.workerHost) return null;
    const claimed = await this.transitions.transition(runId, 'CLAIMED', {
      from: ['QUEUED'],
      set: {
        leaseOwner: this.workerId,
        leaseExpiresAt: new Date(Date.now() + this.config.runs.leaseMs),
        executionCount: run.executionCount + 1,
        attempt: run.attempt + 1,
      },
      where: { sql: 'execution_count = :seen', params: { seen: run.executionCount } },
      event: {
        executionId: run.executionCount + 1,
        payload: { worker_id: this.workerId, attempt: run.attempt + 1 },
      },
    });
    if (!claimed) return null;
    return { ...run, executionCount: run.executionCount + 1, attempt: run.attempt + 1 };
  }

  /**
   * Renews the lease (guarded by the token). Renewal failing for longer than a third of the
   * lease aborts the execution while the lease still holds, i.e. before the sweeper may give the
   * run to another worker; a process frozen past its lease finds the run taken here, or at its
   * next fenced write, whichever comes first.
   */
  private async renewLease(
    token: LeaseToken,
    lease: LeaseState,
    controller: AbortController,
  ): Promise<void> {
    if (controller.signal.aborted) return;
    const { leaseMs } = this.config.runs;
    const sentAt = Date.now();
    if (sentAt - lease.renewedAt >= (2 * leaseMs) / 3) {
      this.logger.warn(
        `run ${token.runId}: lease not renewed for ${sentAt - lease.renewedAt} ms; stopping execution ${token.executionId}`,
      );
      controller.abort('lost');
      // Counted and logged as stale when another execution has the run already (a frozen process).
      await this.fence.check(token, 'lease').catch(() => undefined);
      return;
    }
    try {
      const result = (await this.dataSource.query(
        `UPDATE runs SET lease_expires_at = ? WHERE id = ? AND execution_count = ? AND lease_owner = ?
            AND state IN ('CLAIMED', 'INPROGRESS')`,
        [new Date(sentAt + leaseMs), token.runId, token.executionId, token.holder.lease],
      )) as { affectedRows?: number };
      if (result.affectedRows) {
        lease.renewedAt = Math.max(lease.renewedAt, sentAt);
      } else if (!controller.signal.aborted && !lease.ending) {
        // Cancelled, or taken back after we looked dead: stop working on it. (An execution that
        // is ending released the lease itself; its end's guarded transition speaks for it.)
        this.fence.refused(token, 'lease');
      }
    } catch (err) {
      this.logger.warn(`lease renewal for run ${token.runId} failed: ${(err as Error).message}`);
    }
  }

  private async runHarness(
    run: Run,
    token: LeaseToken,
    signal: AbortSignal,
  ): Promise<ExecutionResult> {
    const { executionId } = token;
    const zeroUsage = { promptTokens: 0, completionTokens: 0, modelCalls: 0 };
    const harness = this.harnesses.find(run.config.harness?.type);
    if (!harness) {
      return {
        outcome: 'failed',
        errorCode: 'operation_not_supported',
        summary: `harness "${run.config.harness?.type}" is not available on this server (available: ${this.harnesses.types.join(', ')})`,
        usage: zeroUsage,
      };
    }
    const model = this.models.find(run.modelId ?? this.models.catalog.defaultModelId);
    if (!model || model.disableReason) {
      return {
        outcome: 'failed',
        errorCode: 'invalid_request',
        summary: `model "${run.modelId}" is not available: ${model?.disableDetail ?? 'not in the model catalogue'}`,
        usage: zeroUsage,
      };
    }
    const secrets = await this.runSecrets.resolve(run);
    const emit = (eventType: string, payload?: Record<string, unknown>) =>
      this.contexts.emitEvent(token, eventType, payload);
    if (secrets.skipped.length) await emit('secrets_skipped', { secrets: secrets.skipped });
    const secretEnv = secrets.env;
    let config: ExecutionConfig;
    try {
      config = await this.runSecrets.executionConfig(run);
    } catch (err) {
      if (!(err instanceof McpSecretError)) throw err;
      return {
        outcome: 'failed',
        errorCode: 'invalid_request',
        summary: err.message,
        usage: zeroUsage,
      };
    }
    if (run.workspaceRetainedUntil) {
      await this.fence.check(token, 'workspace');
      await this.retention.takeOver(run.id, executionId);
    }
    const opened = await this.openSandbox(run, executionId, emit);
    if ('failure' in opened) return { ...opened.failure, usage: zeroUsage };
    const { sandbox } = opened;
    // Cancel (or a lost lease) stops everything in the sandbox at once, not command by command.
    const closeOnAbort = (): void => void sandbox.close();
    signal.addEventListener('abort', closeOnAbort, { once: true });
    try {
      const setup = await this.workspaceSetup.prepare({ ...run, secretEnv }, sandbox, signal, emit);
      if (!setup.ok) {
        return signal.aborted
          ? { outcome: 'cancelled', summary: setup.message, usage: zeroUsage }
          : {
              outcome: 'failed',
              errorCode: 'environment_setup_failed',
              summary: setup.message,
              usage: zeroUsage,
              statusExtra: setup.statusExtra,
            };
      }
      const context = await this.contexts.build(
        run,
        token,
        model,
        signal,
        sandbox,
        secretEnv,
        config,
      );
      return await harness.run(context);
    } finally {
      signal.removeEventListener('abort', closeOnAbort);
      await sandbox.close();
    }
  }

  /**
   * The execution's sandbox, made from the run's environment (image, network, resources); a
   * sandbox that cannot be made ends the execution with the reason.
   */
  private async openSandbox(
    run: Run,
    executionId: number,
    emit: (eventType: string, payload?: Record<string, unknown>) => Promise<void>,
  ): Promise<{ sandbox: Sandbox } | { failure: Omit<ExecutionResult, 'usage'> }> {
    const environment = run.environmentId
      ? await this.workspaceSetup.environment(run.environmentId)
      : null;
    const workspaceDir = this.workspaces.dirFor(run.id);
    await mkdir(workspaceDir, { recursive: true });
    try {
      const sandbox = await this.sandboxes.open({
        runId: run.id,
        executionId,
        teamId: run.teamId,
        workspaceDir,
        environment: environment?.config ?? null,
        apiUrl: internalApiUrl(this.config),
      });
      return { sandbox: reportingLimits(sandbox, emit) };
    } catch (err) {
      if (!(err instanceof SandboxError)) throw err;
      return { failure: { outcome: 'failed', errorCode: err.code, summary: err.message } };
    }
  }

  private async finish(
    run: Run,
    token: LeaseToken,
    result: ExecutionResult,
    elapsedMs: number,
    signal: AbortSignal,
  ): Promise<void> {
    const model = this.models.find(run.modelId ?? '');
    const current = await this.dataSource
      .getRepository(Run)
      .findOne({ select: { requestUsage: true }, where: { id: run.id } });
    const modelId = run.modelId ?? 'unknown';
    const usage = addUsage(current?.requestUsage ?? null, {
      modelId,
      tokens: result.usage,
      model,
      elapsedMs,
      computeCostPerHourUsd: this.config.runs.computeCostPerHourUsd,
    });
    const { promptTokens, completionTokens } = result.usage;
    this.metrics.modelUsage(
      modelId,
      promptTokens,
      completionTokens,
      inferenceCostUsd(result.usage, model),
    );
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
  private async end(
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
    });
    if (!ended) await this.fence.check(token, 'state');
    if (ended && keepWorkspace) await this.releaseAtOnceIfIdleIsZero(run);
  }

  /** A cancelled execution's workspace is kept for follow-ups like any other ended one. */
  private async keepCancelledWorkspace(run: Run, token: LeaseToken): Promise<void> {
    const kept = await this.dataSource
      .getRepository(Run)
      .update(
        { id: run.id, state: 'CANCELLED', executionCount: token.executionId },
        this.retention.keepUntil(idleDeadline(run.config.idle_timeout_minutes)),
      );
    if (kept.affected) await this.releaseAtOnceIfIdleIsZero(run);
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

  /**
   * An execution interrupted by a lost MySQL/Redis connection: back to QUEUED while attempts
   * remain (the dispatch sweeper enqueues it again), else ERROR as after a dead worker.
   */
  private async handBack(run: Run, token: LeaseToken): Promise<void> {
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

  private async requeueForFollowups(runId: string): Promise<boolean> {
    if (!(await this.followups.hasUndelivered(runId))) return false;
    return this.followups.requeueEnded(runId);
  }
}
