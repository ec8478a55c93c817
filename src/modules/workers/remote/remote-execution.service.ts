import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../../../common/errors/api-error';
import type { ErrorCode } from '../../../common/errors/error-codes';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import type { RunArtifact } from '../../artifacts';
import { TranscriptWriter } from '../../conversations';
import { RunSecretsService } from '../execution-secrets.service';
import type { SetupPlan } from '../workspace/workspace-preparation';
import { WorkspaceSetupService } from '../workspace/workspace-setup.service';
import type { ChatMessage } from '../harness/harness.types';
import { harnessAuthSecretValues, TeamSecretsService, McpSecretError } from '../../secrets';
import type { Principal } from '../../../common/auth/principal';
import type { Run, RunState } from '../../runs';
import {
  RunLookupRepository,
  RunLeaseRepository,
  RunKeysService,
  RunSignals,
  RunTransitions,
} from '../../runs';
import { NetworkPolicyService } from '../../environments';
import type { EnvironmentConfig } from '../../environments';
import { describeApprovalRule, type ExecutionConfig } from '../../run-config';
import {
  ExecutionApprovals,
  StoredApprovalRuleError,
} from '../approvals/execution-approvals.service';
import { ExecutionContextFactory, ExecutionInputs } from '../execution-context.factory';
import { ExecutionToken, StaleExecutionError } from '../execution-fence';
import {
  FinishReport,
  MAX_STATUS_MESSAGE,
  resultOfFinishReport,
  runEndStatus,
  SetupReport,
} from '../execution-result';
import { ExecutionUsage } from '../execution-usage';
import type { BoundSecret } from '../../../common/egress/egress-policy';
import { AmbientMetrics } from '../../metrics';
import { vendorProviderKey } from '../harness/vendors/provider-keys';
import { EGRESS_SUMMARY, egressSummaryCounts } from '../sandbox/egress/egress-recorder';
import { SelfHostedRuns } from './self-hosted-runs.service';

/** No tokens: what an execution that ends before its harness ran used. */
const NO_TOKENS = { promptTokens: 0, completionTokens: 0, modelCalls: 0 };

/** Timeline event: a service-hosted execution's own key asked to finish (see `finish`). */
export const FINISH_REQUESTED = 'finish_requested';

/** What a remote execution prepares before its harness starts, as Ambient's workers would. */
export interface RemotePreparation {
  /** Null without an environment; `plan` null when the environment no longer exists. */
  environment: {
    environmentId: string;
    plan: SetupPlan | null;
    /** What the environment asks of the worker's sandbox; null when it no longer exists. */
    sandbox: Pick<
      EnvironmentConfig,
      'docker_image' | 'network' | 'egress_allow' | 'resources'
    > | null;
  } | null;
  /** Values of the team secrets named in `config.harness_auth_secrets`, by secret name. */
  harnessSecrets: Record<string, string>;
  /** `config.secrets` as environment variables (a host-bound secret's placeholder). */
  runSecrets: Record<string, string>;
  /** The host-bound secrets, for the worker's egress proxy to inject. */
  boundSecrets: BoundSecret[];
}

/**
 * An execution running outside Ambient's workers (a self-hosted worker), driven through the
 * run-scoped API with the execution's key: start, keep the lease, record the conversation, take
 * follow-ups, finish. The same state rules as RunExecutor, with the key as the lease owner.
 */
@Injectable()
export class RemoteExecutionService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly runLookup: RunLookupRepository,
    private readonly leases: RunLeaseRepository,
    private readonly runKeys: RunKeysService,
    private readonly selfHosted: SelfHostedRuns,
    private readonly transitions: RunTransitions,
    private readonly contexts: ExecutionContextFactory,
    private readonly usage: ExecutionUsage,
    private readonly transcripts: TranscriptWriter,
    private readonly workspaceSetup: WorkspaceSetupService,
    private readonly secrets: TeamSecretsService,
    private readonly runSecrets: RunSecretsService,
    private readonly signals: RunSignals,
    private readonly metrics: AmbientMetrics,
    private readonly networkPolicy: NetworkPolicyService,
    private readonly approvals: ExecutionApprovals,
  ) {}

  /** Claims the offer if the websocket claim has not arrived yet, then CLAIMED → INPROGRESS. */
  async start(principal: Principal): Promise<{ run: Run; inputs: ExecutionInputs }> {
    const owner = RunKeysService.leaseOwnerFor(principal.keyId);
    let { run } = await this.runKeys.resolve(principal);
    if (run.state === 'PENDING' && (await this.selfHosted.claim(run.id, owner))) {
      ({ run } = await this.runKeys.resolve(principal));
    }
    if (run.state !== 'CLAIMED') {
      throw new ApiError('conflict', `the execution cannot start: the run is ${run.state}`);
    }
    const started = await this.transitions.transition(run.id, 'INPROGRESS', {
      from: ['CLAIMED'],
      set: { startedAt: run.startedAt ?? new Date() },
      where: { sql: 'lease_owner = :owner', params: { owner } },
      event: {
        executionId: run.executionCount,
        payload: { harness: run.config.harness?.type ?? 'oz', worker_id: run.workerHost },
      },
    });
    if (!started) await this.lostRace(principal);
    return { run, inputs: await this.contexts.loadInputs(run, this.tokenOf(principal, run)) };
  }

  /**
   * The run's config with its MCP values revealed, for the worker's harness. A value that cannot
   * be revealed (a referenced team secret deleted since) ends the run FAILED, and the worker is
   * told to stop.
   */
  async executionConfig(principal: Principal, run: Run): Promise<ExecutionConfig> {
    try {
      return await this.runSecrets.executionConfig(run);
    } catch (err) {
      if (!(err instanceof McpSecretError)) throw err;
      await this.endFailed(principal, run, 'invalid_request', err.message);
      throw new ApiError('not_authorized', `the execution cannot start: ${err.message}`);
    }
  }

  /**
   * The environment plan (with the team's git token) and the secrets of the key's own run, for
   * its execution to prepare on the worker's machine. Secrets it names but cannot have are
   * skipped and noted on its timeline, as on Ambient's workers.
   */
  async preparation(principal: Principal, run: Run): Promise<RemotePreparation> {
    await this.checkNetwork(principal, run);
    await this.checkApprovals(principal, run);
    const secrets = await this.runSecrets.resolve(run, vendorProviderKey(run.config));
    if (secrets.skipped.length) {
      const token = this.tokenOf(principal, run);
      await this.fenced(() =>
        this.contexts.emitEvent(token, 'secrets_skipped', { secrets: secrets.skipped }),
      );
    }
    const secretEnv = secrets.env;
    let environment: RemotePreparation['environment'] = null;
    if (run.environmentId) {
      const found = await this.workspaceSetup.environment(run.teamId, run.environmentId);
      const plan = found ? await this.workspaceSetup.planFor({ ...run, secretEnv }, found) : null;
      const sandbox = found
        ? {
            ...(found.config.docker_image ? { docker_image: found.config.docker_image } : {}),
            ...(found.config.network ? { network: found.config.network } : {}),
            ...(found.config.egress_allow ? { egress_allow: found.config.egress_allow } : {}),
            ...(found.config.resources ? { resources: found.config.resources } : {}),
          }
        : null;
      environment = { environmentId: run.environmentId, plan, sandbox };
    }
    return {
      environment,
      harnessSecrets: withBoundProviderKey(
        await harnessAuthSecretValues(this.secrets, run),
        secrets.providerKey,
      ),
      runSecrets: secretEnv,
      boundSecrets: secrets.bound,
    };
  }

  /**
   * An environment asking for open egress after a team admin forbade it ends the run FAILED
   * before the worker prepares anything, as on Ambient's workers. (An environment without a
   * network follows the worker's own default, which its operator sets: not known here.)
   */
  private async checkNetwork(principal: Principal, run: Run): Promise<void> {
    if (!run.environmentId) return;
    const network = (await this.workspaceSetup.environment(run.teamId, run.environmentId))?.config
      .network;
    const refusal = network ? await this.networkPolicy.networkRefusal(run.teamId, network) : null;
    if (!refusal) return;
    await this.endFailed(principal, run, 'not_authorized', refusal);
    throw new ApiError('not_authorized', `the execution cannot start: ${refusal}`);
  }

  /**
   * A self-hosted worker's harness cannot wait for a person: a run with approval rules on its
   * tool calls ends FAILED before the worker prepares anything, rather than run without them.
   * Egress rules are its proxy's (an `ask` is refused there, as a `deny`).
   */
  private async checkApprovals(principal: Principal, run: Run): Promise<void> {
    const environment = run.environmentId
      ? await this.workspaceSetup.environment(run.teamId, run.environmentId)
      : null;
    let refusal: string | null;
    try {
      const rules = await this.approvals.rulesFor(run, environment);
      const unenforceable = rules.filter((rule) => !('egress' in rule));
      refusal = unenforceable.length
        ? `approval rules on tool calls (${unenforceable.map(describeApprovalRule).join('; ')}) ` +
          "need Ambient's own workers: a self-hosted worker cannot wait for a person's decision"
        : null;
    } catch (err) {
      if (!(err instanceof StoredApprovalRuleError)) throw err;
      refusal = err.message;
    }
    if (!refusal) return;
    await this.endFailed(principal, run, 'operation_not_supported', refusal);
    throw new ApiError('operation_not_supported', `the execution cannot start: ${refusal}`);
  }

  /**
   * The outcome of preparing the run's environment on the worker. Success clears the
   * environment's `setup_failed`; a failure sets it and ends the run `FAILED
   * environment_setup_failed` with the step's exit code, as RunExecutor does. A self-hosted
   * workspace is not kept for a debug window (the debug agent runs on Ambient's workers).
   */
  async reportEnvironmentSetup(principal: Principal, report: SetupReport): Promise<RunState> {
    const run = await this.running(principal);
    if (!run.environmentId) {
      throw new ApiError('conflict', 'the run has no environment to prepare');
    }
    if (report.success) {
      await this.workspaceSetup.recordSuccess(run.teamId, run.environmentId);
      return run.state;
    }
    const message =
      (report.message ?? '').trim().slice(0, MAX_STATUS_MESSAGE) || 'environment setup failed';
    const failure = { message, exitCode: report.exit_code ?? null };
    const statusExtra = await this.workspaceSetup.recordFailure(
      run,
      run.environmentId,
      failure,
      null,
    );
    return this.endFailed(principal, run, 'environment_setup_failed', message, statusExtra);
  }

  /** Ends the key's execution in the state the error code means, before the harness ran. */
  private async endFailed(
    principal: Principal,
    run: Run,
    errorCode: ErrorCode,
    summary: string,
    statusExtra: Record<string, unknown> = {},
  ): Promise<RunState> {
    const failed = runEndStatus({ outcome: 'failed', errorCode, summary, statusExtra });
    const owner = RunKeysService.leaseOwnerFor(principal.keyId);
    const requestUsage = this.usage.add(run, NO_TOKENS, null);
    if (!(await this.selfHosted.end(run, owner, { ...failed, requestUsage }))) {
      await this.lostRace(principal);
    }
    return failed.state;
  }

  /** Renews the execution's lease; a 403 tells the worker to stop (cancelled or taken back). */
  async heartbeat(principal: Principal): Promise<{ state: RunState; leaseExpiresAt: Date }> {
    const { run } = await this.runKeys.resolve(principal);
    const leaseExpiresAt = new Date(Date.now() + this.config.runs.leaseMs);
    const owner = RunKeysService.leaseOwnerFor(principal.keyId);
    if (!(await this.leases.renewLease(run.id, owner, leaseExpiresAt))) {
      const { run: now } = await this.runKeys.resolve(principal);
      throw new ApiError('conflict', `the execution has not started: the run is ${now.state}`);
    }
    return { state: run.state, leaseExpiresAt };
  }

  async recordMessages(principal: Principal, messages: ChatMessage[]): Promise<number> {
    const run = await this.running(principal);
    const token = this.tokenOf(principal, run);
    await this.fenced(() => this.contexts.recordMessages(token, messages));
    return messages.length;
  }

  /**
   * Records an artifact an execution reports (validated as `parseArtifactInput` says), whether
   * it runs on a self-hosted worker or on Ambient's own (commands get `AMBIENT_RUN_KEY`).
   */
  async reportArtifact(principal: Principal, report: unknown): Promise<RunArtifact> {
    const own = await this.runLookup.find(principal.runId ?? '');
    if (own && RunKeysService.isServiceExecutionKey(own, principal.runExecutionId)) {
      const token = this.commandTokenOf(own);
      return this.fenced(() => this.contexts.reportArtifact(own, token, report));
    }
    const run = await this.running(principal);
    const token = this.tokenOf(principal, run);
    return this.fenced(() => this.contexts.reportArtifact(run, token, report));
  }

  async takeFollowups(principal: Principal): Promise<string[]> {
    const run = await this.running(principal);
    return this.fenced(() => this.contexts.takeFollowups(this.tokenOf(principal, run)));
  }

  /**
   * Records the events in order, all or none, each dated `age_ms` before now by this server's
   * clock, and never before the one ahead of it (the timeline reads its ids as its order).
   */
  async appendEvents(
    principal: Principal,
    events: { event_type: string; payload?: Record<string, unknown>; age_ms?: number }[],
  ): Promise<void> {
    const run = await this.running(principal);
    const now = Date.now();
    let previous = -Infinity;
    const dated = events.map((event) => {
      previous = Math.max(previous, now - (event.age_ms ?? 0));
      return {
        eventType: event.event_type,
        payload: event.payload,
        occurredAt: new Date(previous),
      };
    });
    await this.fenced(() => this.contexts.recordEvents(this.tokenOf(principal, run), dated));
    // A self-hosted worker's proxy decides on its machine: its summary is what the metrics get.
    for (const event of events) {
      if (event.event_type !== EGRESS_SUMMARY) continue;
      for (const [decision, count] of egressSummaryCounts(event.payload)) {
        this.metrics.egressRequest(decision, count);
      }
    }
  }

  /**
   * Ends the execution with its result and usage. An execution cancelled meanwhile may still
   * report what it cost (its run stays CANCELLED). Inference is priced with the server's model
   * catalogue; compute on the team's own machine is not charged.
   *
   * On Ambient's own workers the key belongs to a command the agent runs, and the worker holds
   * the lease: the request is stored as a `finish_requested` event and the worker is signalled to
   * stop the harness and end the run with it (`RunExecutor`), so the answer is the run's current
   * state. Usage and transcript in the request are ignored there; the worker knows its own.
   */
  async finish(principal: Principal, report: FinishReport): Promise<RunState> {
    const summary = report.summary.trim();
    const own = await this.runLookup.find(principal.runId ?? '');
    if (own && RunKeysService.isServiceExecutionKey(own, principal.runExecutionId)) {
      await this.fenced(() =>
        this.contexts.emitEvent(this.commandTokenOf(own), FINISH_REQUESTED, {
          success: report.success,
          summary: summary.slice(0, MAX_STATUS_MESSAGE),
          ...(report.error_code ? { error_code: report.error_code } : {}),
        }),
      );
      await this.signals.publishFinish(own.id);
      return own.state;
    }
    const result = resultOfFinishReport({ ...report, summary });
    const owner = RunKeysService.leaseOwnerFor(principal.keyId);
    const { run, holdsLease } = await this.runKeys.resolve(principal, 'cancelled');
    const usage = this.usage.add(run, result.usage, null);
    if (!holdsLease) {
      const executionId = principal.runExecutionId ?? run.executionCount;
      await this.transitions.recordCancelledUsage({ runId: run.id, executionId }, usage);
      await this.runKeys.revoke(principal.keyId);
      return run.state;
    }
    if (run.state === 'PENDING') await this.selfHosted.claim(run.id, owner);
    const current = (await this.runKeys.resolve(principal)).run;
    if (result.rawTranscript !== undefined) {
      const raw = { executionId: current.executionCount, stream: result.rawTranscript };
      await this.transcripts.keepRawStream(run.id, raw).catch(() => undefined);
    }
    const end = { ...runEndStatus(result), requestUsage: usage };
    if (!(await this.selfHosted.end(current, owner, end))) {
      await this.lostRace(principal);
    }
    return end.state;
  }

  /** A guarded change matched nothing: say why (the lease is gone), or ask for a retry. */
  private async lostRace(principal: Principal): Promise<never> {
    await this.runKeys.resolve(principal); // throws when the execution lost the run
    throw new ApiError('conflict', 'the run changed state meanwhile; retry');
  }

  /** The fencing token of a self-hosted execution: its key is its lease. */
  private tokenOf(principal: Principal, run: Run): ExecutionToken {
    return {
      runId: run.id,
      executionId: principal.runExecutionId ?? run.executionCount,
      holder: { lease: RunKeysService.leaseOwnerFor(principal.keyId) },
    };
  }

  /** A command's key on Ambient's workers acts for whichever worker holds its execution. */
  private commandTokenOf(run: Run): ExecutionToken {
    return { runId: run.id, executionId: run.executionCount, holder: 'run-key' };
  }

  /** A write refused for a stale token answers as a lost lease does: 403, stop working. */
  private async fenced<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (!(err instanceof StaleExecutionError)) throw err;
      throw new ApiError(
        'not_authorized',
        `this key's execution no longer holds run ${err.token.runId}; stop working on it`,
      );
    }
  }

  private async running(principal: Principal): Promise<Run> {
    const { run } = await this.runKeys.resolve(principal);
    if (run.state !== 'INPROGRESS') {
      throw new ApiError('conflict', `the execution has not started: the run is ${run.state}`);
    }
    return run;
  }
}

/** A vendor CLI's key bound to its provider (allowlist): the worker gets its placeholder. */
function withBoundProviderKey(
  values: Record<string, string>,
  bound: { name: string; placeholder: string } | undefined,
): Record<string, string> {
  return bound ? { ...values, [bound.name]: bound.placeholder } : values;
}
