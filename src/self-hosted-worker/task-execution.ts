import { mkdir } from 'node:fs/promises';
import { prepareWorkspace } from '../modules/workers/workspace/workspace-preparation';
import type { HarnessRegistry } from '../modules/workers/harness/harness-registry';
import type { Harness, HarnessContext } from '../modules/workers/harness/harness.types';
import { type ExecutionResult, finishReportOf } from '../modules/workers/execution-result';
import type { WorkspaceService } from '../modules/workers/workspace/workspace.service';
import type { CatalogModel, ModelCatalog } from '../modules/models/model-catalog';
import type { Sandboxes } from '../modules/workers/sandbox/sandboxes';
import { Sandbox, SandboxError } from '../modules/workers/sandbox/sandbox.types';
import type { EnvironmentConfig } from '../modules/environments/environment-config';
import { initialPrompt } from '../modules/workers/initial-prompt';
import { EgressRecorder } from '../modules/workers/sandbox/egress/egress-recorder';
import { ExecutionTimeline } from '../modules/workers/harness/execution-timeline';
import {
  MAX_RAW_TRANSCRIPT_CHARS,
  RUN_KEY_ENV,
  TaskAssignment,
  WorkerMessage,
} from '../modules/workers/remote/worker-protocol';
import { setupPlanFrom } from './environment-plan';
import { ExecutionStart, RunApiClient, RunApiError } from './run-api-client';

export type StopReason = 'cancelled' | 'lost' | 'shutdown';

export interface ExecutionDeps {
  apiUrl: string;
  workerId: string;
  workspaces: WorkspaceService;
  harnesses: HarnessRegistry;
  catalog: ModelCatalog;
  /** Every execution runs in a sandbox of this machine (AMBIENT_SANDBOX, as on the server). */
  sandboxes: Sandboxes;
  /** Clones environment repositories from here instead of the server's base (`--git-url-base`). */
  gitUrlBase?: string;
  log(line: string): void;
}

/** How the execution ended; `ended` when the server ended the run already (a failed setup). */
type ExecutionOutcome = ExecutionResult & { ended?: boolean };

type EndMessage = Extract<WorkerMessage, { type: 'task_completed' | 'task_failed' }>;

const NO_USAGE = { promptTokens: 0, completionTokens: 0, modelCalls: 0 };

/**
 * One assigned execution on this machine: start it through the run-scoped API, run the harness
 * in `<workspace root>/<run id>` while renewing the lease, record the conversation as it goes,
 * finish with the result and usage, and say how it ended (the websocket end signal).
 */
export class TaskExecution {
  private readonly controller = new AbortController();

  constructor(
    readonly assignment: TaskAssignment,
    private readonly deps: ExecutionDeps,
  ) {}

  get runId(): string {
    return this.assignment.task_id;
  }

  stop(reason: StopReason): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  async run(): Promise<EndMessage> {
    const key = this.assignment.env_vars?.[RUN_KEY_ENV];
    if (!key) {
      return this.failed(`the assignment carries no run-scoped key (${RUN_KEY_ENV})`, 'user_error');
    }
    const api = new RunApiClient(this.deps.apiUrl, key);
    let start: ExecutionStart;
    try {
      start = await api.start();
    } catch (err) {
      return this.unreported(err);
    }
    const renewEvery = Math.max(100, Math.floor(start.lease_ms / 3));
    const heartbeat = setInterval(() => void this.renewLease(api), renewEvery);
    try {
      const result = await this.runHarness(start, api).catch((err: Error): ExecutionOutcome => ({
        outcome: 'failed',
        errorCode: 'internal_error',
        summary: `the self-hosted worker "${this.deps.workerId}" failed: ${err.message}`,
        usage: NO_USAGE,
      }));
      if (this.controller.signal.reason === 'shutdown') {
        return this.failed(
          'the worker shut down; the run goes back to the queue',
          'operator_shutdown',
        );
      }
      if (result.ended) return this.completed(result.summary);
      try {
        await api.finish(finishReportOf(result, this.rawTranscript(result)));
      } catch (err) {
        if (!(err instanceof RunApiError && err.lostRun)) return this.unreported(err);
      }
      if (result.outcome === 'cancelled') {
        return this.completed('Task cancelled by user request.', 'CANCELLED');
      }
      return this.completed(
        result.outcome === 'succeeded' ? 'Task completed successfully' : result.summary,
      );
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async runHarness(start: ExecutionStart, api: RunApiClient): Promise<ExecutionOutcome> {
    const { config } = start;
    const harness = this.deps.harnesses.find(config.harness?.type);
    if (!harness) {
      return this.refused(
        'operation_not_supported',
        `harness "${config.harness?.type}" is not available on self-hosted worker "${this.deps.workerId}" (available: ${this.deps.harnesses.names().join(', ')})`,
      );
    }
    const modelId = config.model_id ?? this.deps.catalog.defaultModelId;
    const model = this.deps.catalog.models.find((m) => m.id === modelId);
    // A vendor CLI brings its own model: only the oz loop needs the provider key of this machine.
    if (!model || (harness.type === 'oz' && model.disableReason)) {
      return this.refused(
        'invalid_request',
        `model "${modelId}" is not available on self-hosted worker "${this.deps.workerId}": ${model?.disableDetail ?? 'not in its model catalogue'}`,
      );
    }
    const workspaceDir = this.deps.workspaces.dirFor(start.run_id);
    await mkdir(workspaceDir, { recursive: true });
    let sandbox: Sandbox;
    // Every event of the execution in the order emitted, a command's held to go out together.
    const timeline = new ExecutionTimeline((events) =>
      this.reporting(api.appendEvents(events), undefined),
    );
    // This machine's proxy decides; the server's timeline (and its metrics) hear of it.
    const egress = new EgressRecorder(timeline.emit, () => undefined);
    try {
      sandbox = await this.deps.sandboxes.open({
        runId: start.run_id,
        executionId: start.execution_id,
        teamId: start.team_id,
        workspaceDir,
        environment: (start.environment?.sandbox ?? null) as EnvironmentConfig | null,
        apiUrl: this.deps.apiUrl,
        egress: { secrets: start.bound_secrets ?? [], onDecision: egress.record },
      });
    } catch (err) {
      if (!(err instanceof SandboxError)) throw err;
      return this.refused(err.code, `self-hosted worker "${this.deps.workerId}": ${err.message}`);
    }
    const closeOnStop = (): void => void sandbox.close();
    this.controller.signal.addEventListener('abort', closeOnStop, { once: true });
    try {
      return await this.runInSandbox(start, api, timeline, harness, model, sandbox);
    } finally {
      this.controller.signal.removeEventListener('abort', closeOnStop);
      await sandbox.close();
      await egress.finish();
    }
  }

  private async runInSandbox(
    start: ExecutionStart,
    api: RunApiClient,
    timeline: ExecutionTimeline,
    harness: Harness,
    model: CatalogModel,
    sandbox: Sandbox,
  ): Promise<ExecutionOutcome> {
    const setupFailure = await this.prepareEnvironment(start, api, timeline, sandbox);
    if (setupFailure) return setupFailure;
    const workspace = await this.deps.workspaces.prepare(
      start.run_id,
      start.attachments.map((a) => ({
        fileName: a.file_name,
        data: Buffer.from(a.data, 'base64'),
      })),
      sandbox,
    );
    const userMessages = start.first_execution
      ? [
          initialPrompt(
            { prompt: start.prompt, skillSpec: start.skill_spec },
            workspace.attachmentPaths,
          ),
        ]
      : [];
    userMessages.push(...start.followups);
    const context: HarnessContext = {
      runId: start.run_id,
      executionId: start.execution_id,
      teamId: start.team_id,
      model,
      config: start.config,
      mode: start.mode,
      history: start.history,
      userMessages,
      workspaceDir: workspace.dir,
      sandbox,
      commandEnv: this.deps.workspaces.commandEnv(sandbox, start.run_id, {}, start.run_secrets),
      limits: {
        maxTurns: start.limits.max_turns,
        deadline: Date.now() + start.limits.max_run_seconds * 1000,
        commandTimeoutSeconds: start.limits.command_timeout_seconds,
      },
      signal: this.controller.signal,
      takeFollowups: () => this.reporting(api.takeFollowups(), []),
      recordMessage: (message) => this.reporting(api.recordMessages([message]), undefined),
      emitEvent: timeline.emit,
      holdEvents: () => timeline.hold(),
      teamSecret: async (name) => start.harness_secrets[name] ?? null,
    };
    return harness.run(context);
  }

  /**
   * Prepares the run's environment in its workspace as Ambient's workers do (the same code),
   * recording the timeline on the server. Null when the workspace is ready. A failure is reported
   * (the server ends the run) and the workspace removed: self-hosted runs get no debug window.
   */
  private async prepareEnvironment(
    start: ExecutionStart,
    api: RunApiClient,
    timeline: ExecutionTimeline,
    sandbox: Sandbox,
  ): Promise<ExecutionOutcome | null> {
    const { environment } = start;
    if (!environment) return null;
    const signal = this.controller.signal;
    const failed = await prepareWorkspace({
      runId: start.run_id,
      sandbox,
      environmentId: environment.environment_id,
      workspaces: this.deps.workspaces,
      signal,
      emit: timeline.emit,
      loadPlan: async () => setupPlanFrom(environment, start.run_secrets, this.deps.gitUrlBase),
    });
    if (!failed) {
      await this.reporting(api.reportEnvironmentSetup({ success: true }), undefined);
      return null;
    }
    if (signal.aborted) return { outcome: 'cancelled', summary: failed.message, usage: NO_USAGE };
    this.deps.log(`run ${this.runId}: ${failed.message.split('\n')[0]}`);
    await this.deps.workspaces.remove(start.run_id);
    await this.reporting(
      api.reportEnvironmentSetup({
        success: false,
        message: failed.message,
        exit_code: failed.exitCode,
      }),
      undefined,
    );
    return { ...this.refused('environment_setup_failed', failed.message), ended: true };
  }

  /** A vendor CLI's raw stream goes with the finish report, unless it is too long for one. */
  private rawTranscript(result: ExecutionResult): string | undefined {
    const raw = result.rawTranscript;
    if (raw === undefined || raw.length <= MAX_RAW_TRANSCRIPT_CHARS) return raw;
    this.deps.log(`run ${this.runId}: raw transcript too long to send; its messages stand in`);
    return undefined;
  }

  /** A call of the run-scoped API from inside the harness: losing the run stops the harness. */
  private async reporting<T>(call: Promise<T>, whenLost: T): Promise<T> {
    try {
      return await call;
    } catch (err) {
      if (!(err instanceof RunApiError && err.lostRun)) throw err;
      this.deps.log(`run ${this.runId}: ${err.message}; stopping`);
      this.stop('lost');
      return whenLost;
    }
  }

  private async renewLease(api: RunApiClient): Promise<void> {
    try {
      await api.heartbeat();
    } catch (err) {
      if (err instanceof RunApiError && err.lostRun) {
        this.deps.log(`run ${this.runId}: ${err.message}; stopping`);
        this.stop('lost');
      } else {
        this.deps.log(`run ${this.runId}: lease renewal failed (${(err as Error).message})`);
      }
    }
  }

  private refused(errorCode: ExecutionResult['errorCode'], summary: string): ExecutionResult {
    return { outcome: 'failed', errorCode, summary, usage: NO_USAGE };
  }

  /** The execution could not report through the run-scoped API: tell the server over the socket. */
  private unreported(err: unknown): EndMessage {
    if (err instanceof RunApiError && err.lostRun) {
      return this.completed(`Task stopped: ${err.message}`, 'CANCELLED');
    }
    return this.failed(
      `could not report to the server: ${(err as Error).message}`,
      'backend_failure',
    );
  }

  private completed(message: string, taskState?: string): EndMessage {
    return {
      type: 'task_completed',
      data: { task_id: this.runId, message, ...(taskState ? { task_state: taskState } : {}) },
    };
  }

  private failed(message: string, failureCause: string): EndMessage {
    return {
      type: 'task_failed',
      data: { task_id: this.runId, message, failure_cause: failureCause },
    };
  }
}
