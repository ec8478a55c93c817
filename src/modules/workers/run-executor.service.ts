import { Inject, Injectable, Logger } from '@nestjs/common';
import { mkdir } from 'node:fs/promises';
import { isBackingServiceUnavailable } from '../../common/errors/unavailable';
import { withLogBindings } from '../../common/logging/log-bindings';
import { RUN_ID, withSpan } from '../../common/tracing';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { HarnessRegistry } from './harness/harness-registry';
import { TranscriptWriter } from '../conversations';
import { Environment, NetworkPolicyService } from '../environments';
import { ModelsService } from '../models';
import type { Run } from '../runs';
import { RunSignals } from '../runs';
import type { ExecutionConfig } from '../run-config';
import { McpSecretError } from '../secrets';
import {
  ExecutionApprovals,
  PreparedApprovals,
  StoredApprovalRuleError,
} from './approvals/execution-approvals.service';
import { ExecutionContextFactory, internalApiUrl } from './execution-context.factory';
import { ExecutionFence, StaleExecutionError } from './execution-fence';
import { ExecutionLeases, LeaseToken } from './execution-lease';
import { ExecutionOutcomes } from './execution-outcome';
import type { ExecutionResult } from './execution-result';
import { RunSecretsService } from './execution-secrets.service';
import { RunBudget } from './run-budget.service';
import { reportingLimits } from './sandbox/reporting-limits';
import { AmbientMetrics } from '../metrics';
import { vendorProviderKey } from './harness/vendors/provider-keys';
import { EgressRecorder } from './sandbox/egress/egress-recorder';
import type { EgressRequest } from './sandbox/egress/execution-egress';
import { SandboxService } from './sandbox/sandbox.service';
import { Sandbox, SandboxError, SandboxLostError } from './sandbox/sandbox.types';
import { WorkspaceRetentionService } from './workspace/workspace-retention.service';
import { WorkspaceSetupService } from './workspace/workspace-setup.service';
import type { DockerSnapshot } from './workspace/environment-snapshots.service';
import { WorkspaceService } from './workspace/workspace.service';

/** `lost`: the execution no longer holds its run (or could not renew its lease in time). */
export type AbortReason = 'cancelled' | 'lost' | 'shutdown' | 'finished';

export interface ExecuteOutcome {
  /** Follow-ups arrived as the execution ended: the run must be enqueued again once this job is done. */
  requeue: boolean;
  /** The run found no free concurrency slot and waits: a slot freed meanwhile must be looked for. */
  atCapacity?: boolean;
}

/**
 * Executes one run, top to bottom: claim it and keep the lease (ExecutionLeases), INPROGRESS,
 * resolve the harness, model and secrets, open the sandbox, prepare the workspace, build the
 * context and run the harness, then record the outcome (ExecutionOutcomes). A worker that dies
 * stops renewing its lease and the recovery sweeper takes the run back.
 */
@Injectable()
export class RunExecutor {
  private readonly logger = new Logger('RunExecutor');
  private readonly inFlight = new Map<string, AbortController>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly leases: ExecutionLeases,
    private readonly outcomes: ExecutionOutcomes,
    private readonly signals: RunSignals,
    private readonly harnesses: HarnessRegistry,
    private readonly models: ModelsService,
    private readonly contexts: ExecutionContextFactory,
    private readonly workspaceSetup: WorkspaceSetupService,
    private readonly retention: WorkspaceRetentionService,
    private readonly runSecrets: RunSecretsService,
    private readonly transcripts: TranscriptWriter,
    private readonly sandboxes: SandboxService,
    private readonly workspaces: WorkspaceService,
    private readonly fence: ExecutionFence,
    private readonly budget: RunBudget,
    private readonly networkPolicy: NetworkPolicyService,
    private readonly metrics: AmbientMetrics,
    private readonly approvals: ExecutionApprovals,
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
    const controller = new AbortController();
    // Listening before the claim, which also starts the run: a cancel or finish accepted once the
    // run is claimed reaches this execution (one accepted before makes the claim fail).
    const stopListening = await this.signals
      .onCancel(runId, () => controller.abort('cancelled'))
      .catch(() => () => undefined);
    const stopListeningForFinish = await this.signals
      .onFinish(runId, () => controller.abort('finished'))
      .catch(() => () => undefined);
    const stopListeningAll = () => {
      stopListening();
      stopListeningForFinish();
    };
    const run = await this.leases.claim(runId).catch((err: Error) => {
      stopListeningAll();
      throw err;
    });
    if (run === null || run === 'at_capacity') {
      stopListeningAll();
      return run === 'at_capacity' ? { requeue: false, atCapacity: true } : { requeue: false };
    }
    const executionId = run.executionCount;
    const token: LeaseToken = {
      runId,
      executionId,
      holder: { lease: this.leases.workerId },
      onStale: () => controller.abort('lost'),
    };
    this.inFlight.set(runId, controller);
    const lease = this.leases.hold(token, controller);
    const startedAt = Date.now();
    try {
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
      lease.ending();
      const result =
        controller.signal.reason === 'cancelled'
          ? harnessResult
          : await this.outcomes.withFinishRequest(token, harnessResult);
      // A lease not renewed in time (a process frozen past it): the run may be another's by now,
      // and then this execution stops here, recording nothing.
      if (controller.signal.reason === 'lost') {
        await this.fence.check(token, 'state', { orCancelledHere: true });
      }
      await this.keepRawTranscript(token, result.rawTranscript);
      await this.outcomes.record(run, token, result, Date.now() - startedAt, controller.signal);
    } catch (err) {
      lease.ending();
      if (err instanceof StaleExecutionError || controller.signal.reason === 'lost') {
        // Another execution holds the run now (or may soon): this one writes nothing more. A
        // cancel also makes the token stale: that run's workspace is still kept (guarded).
        this.logger.warn(
          `run ${runId}: execution ${executionId} stopped: ${(err as Error).message}`,
        );
        await this.outcomes.keepCancelledWorkspace(run, token).catch(() => undefined);
        return { requeue: false };
      }
      if (isBackingServiceUnavailable(err)) {
        // MySQL or Redis went away under the execution: nothing is wrong with the run. It goes
        // back to the queue (the attempt counts, as when a worker dies), or, if MySQL is still
        // gone, its lease lapses and the sweeper recovers it the same way.
        this.logger.warn(
          `run ${runId} interrupted by a lost connection: ${(err as Error).message}`,
        );
        await this.outcomes.handBack(run, token).catch((again: Error) => {
          this.logger.warn(`run ${runId} left to the sweeper: ${again.message}`);
        });
        return { requeue: false };
      }
      this.logger.error(`run ${runId} failed unexpectedly: ${(err as Error).stack ?? err}`);
      await this.outcomes
        .end(run, token, 'ERROR', {
          message: `internal error while executing the run: ${(err as Error).message}`,
          error_code: 'internal_error',
          retryable: true,
        })
        .catch((again: Error) => {
          this.logger.warn(`run ${runId} not ended: ${again.message}`);
        });
    } finally {
      lease.stop();
      stopListeningAll();
      this.inFlight.delete(runId);
    }
    return { requeue: await this.outcomes.requeueForFollowups(runId) };
  }

  /**
   * A harness's raw stream (a vendor CLI's) is kept before the run ends, so a finished run's
   * transcript always has it; only while the execution still holds the run, or was cancelled
   * holding it (blobs cannot share the row lock, so this is a check). Transcripts are otherwise
   * rendered from the stored messages when asked: nothing to write for them.
   */
  private async keepRawTranscript(token: LeaseToken, rawStream: string | undefined): Promise<void> {
    if (rawStream === undefined) return;
    const { runId, executionId } = token;
    await this.fence.check(token, 'transcript', { orCancelledHere: true });
    await this.transcripts
      .keepRawStream(runId, { executionId, stream: rawStream })
      .catch((err: Error) => {
        this.logger.warn(`could not keep the raw transcript of run ${runId}: ${err.message}`);
      });
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
        summary: `harness "${run.config.harness?.type}" is not available on this server (available: ${this.harnesses.names().join(', ')})`,
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
    // A spent budget ends the run before its sandbox, let alone a model call.
    const overBudget = await this.budget.refusal(run, zeroUsage);
    if (overBudget) {
      return {
        outcome: 'failed',
        errorCode: 'budget_exceeded',
        summary: overBudget,
        usage: zeroUsage,
      };
    }
    const providerKey = vendorProviderKey(run.config);
    const secrets = await this.runSecrets.resolve(run, providerKey);
    const emit = (eventType: string, payload?: Record<string, unknown>) =>
      this.contexts.emitEvent(token, eventType, payload);
    if (secrets.skipped.length) await emit('secrets_skipped', { secrets: secrets.skipped });
    const secretEnv = secrets.env;
    const environment = run.environmentId
      ? await this.workspaceSetup.environment(run.teamId, run.environmentId)
      : null;
    let approvals: PreparedApprovals;
    try {
      approvals = await this.approvals.prepare(run, token, environment);
    } catch (err) {
      if (!(err instanceof StoredApprovalRuleError)) throw err;
      return {
        outcome: 'failed',
        errorCode: 'invalid_request',
        summary: err.message,
        usage: zeroUsage,
      };
    }
    const egress = new EgressRecorder(emit, (decision) => this.metrics.egressRequest(decision));
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
    const opened = await this.openSandbox({ ...run, secretEnv }, environment, emit, signal, {
      secrets: secrets.bound,
      onDecision: (decision) => {
        egress.record(decision);
        approvals.onEgressDecision?.(decision);
      },
      approvedHosts: approvals.approvedHosts,
    });
    if ('failure' in opened) return { ...opened.failure, usage: zeroUsage };
    const { sandbox, snapshot } = opened;
    // Cancel (or a lost lease) stops everything in the sandbox at once, not command by command.
    const closeOnAbort = (): void => void sandbox.close();
    signal.addEventListener('abort', closeOnAbort, { once: true });
    try {
      const setup = await this.workspaceSetup.prepare(
        { ...run, secretEnv },
        sandbox,
        signal,
        emit,
        snapshot,
      );
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
      const boundKey = secrets.providerKey;
      return await harness.run({
        ...context,
        // A vendor CLI's key bound to its provider: the CLI gets the placeholder.
        ...(boundKey
          ? {
              teamSecret: async (name: string) =>
                name === boundKey.name ? boundKey.placeholder : context.teamSecret(name),
            }
          : {}),
        budgetRefusal: (usage) => this.budget.refusal(run, usage),
        approvals: approvals.gate,
      });
    } catch (err) {
      // Lost during the workspace's setup (the oz harness reports its own, with its usage).
      if (!(err instanceof SandboxLostError) || signal.aborted) throw err;
      return { outcome: 'failed', errorCode: err.code, summary: err.message, usage: zeroUsage };
    } finally {
      signal.removeEventListener('abort', closeOnAbort);
      await sandbox.close();
      await egress.finish();
    }
  }

  /**
   * The execution's sandbox, made from the run's environment (image, network, resources); a
   * sandbox that cannot be made ends the execution with the reason. On docker, a new workspace's
   * environment snapshot is looked up first: its container is made from the snapshot's image.
   */
  private async openSandbox(
    run: Run & { secretEnv: Record<string, string> },
    environment: Environment | null,
    emit: (eventType: string, payload?: Record<string, unknown>) => Promise<void>,
    signal: AbortSignal,
    egress: EgressRequest,
  ): Promise<
    | { sandbox: Sandbox; snapshot: DockerSnapshot | null }
    | { failure: Omit<ExecutionResult, 'usage'> }
  > {
    // The team's policy as it is now: an admin's ban reaches environments saved before it.
    const network = environment?.config.network ?? this.config.sandbox.network;
    const refusal = await this.networkPolicy.networkRefusal(run.teamId, network);
    if (refusal) {
      return { failure: { outcome: 'failed', errorCode: 'not_authorized', summary: refusal } };
    }
    const workspaceDir = this.workspaces.dirFor(run.id);
    await mkdir(workspaceDir, { recursive: true });
    try {
      const { backend } = await this.sandboxes.select();
      const snapshot = await this.workspaceSetup.snapshotBeforeOpen(
        run,
        environment,
        backend?.name,
        signal,
      );
      const sandbox = await this.sandboxes.open({
        runId: run.id,
        executionId: run.executionCount,
        teamId: run.teamId,
        workspaceDir,
        environment: environment?.config ?? null,
        apiUrl: internalApiUrl(this.config),
        snapshotImage: snapshot?.image ?? null,
        egress,
      });
      return { sandbox: reportingLimits(sandbox, emit), snapshot };
    } catch (err) {
      if (!(err instanceof SandboxError)) throw err;
      return { failure: { outcome: 'failed', errorCode: err.code, summary: err.message } };
    }
  }
}
