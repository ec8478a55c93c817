import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Job } from 'bull';
import {
  QueueProcessor,
  QueueProcessorHooks,
} from '../../../common/queues/queue-processor.decorator';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { HarnessRegistry } from '../harness/harness-registry';
import { WorkspaceService } from '../workspace/workspace.service';
import { ModelsService } from '../../models';
import { ExecutionContextFactory, internalApiUrl } from '../execution-context.factory';
import type { ExecutionToken } from '../execution-fence';
import { RunFollowupsService, RunLookupRepository } from '../../runs';
import { RunSecretsService } from '../execution-secrets.service';
import { SandboxService } from '../sandbox/sandbox.service';
import { DEBUG_AGENTS_QUEUE, DEBUG_JOB, DebugJobData } from './debug-agent-queues';
import { DebugWindowService } from './debug-window.service';
import { WorkspaceSetupService } from '../workspace/workspace-setup.service';

/** Bounds the re-checks for follow-ups that raced with an agent's end. */
const MAX_PASSES = 5;

export function debugPreamble(failure: string): string {
  return [
    'You are a debug agent. Preparing this workspace failed, so the task never started:',
    failure,
    'The workspace is kept as the failed setup left it. Help the user find out why; do not',
    "start the run's original task.",
  ].join('\n');
}

/**
 * Worker role: runs debug agents in retained workspaces. `WorkspaceRetentionSweeper` deletes them
 * once the debug window has closed (later follow-ups then take the ordinary continuation path).
 */
@Injectable()
export class DebugAgentWorker implements QueueProcessorHooks {
  private readonly logger = new Logger('DebugAgentWorker');
  private readonly active = new AbortController();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly records: RunLookupRepository,
    private readonly window: DebugWindowService,
    private readonly contexts: ExecutionContextFactory,
    private readonly followups: RunFollowupsService,
    private readonly harnesses: HarnessRegistry,
    private readonly models: ModelsService,
    private readonly sandboxes: SandboxService,
    private readonly environments: WorkspaceSetupService,
    private readonly workspaces: WorkspaceService,
    private readonly runSecrets: RunSecretsService,
  ) {}

  @QueueProcessor<DebugJobData>(DEBUG_AGENTS_QUEUE, {
    job: DEBUG_JOB,
    role: 'worker',
    concurrency: (config) => config.runs.workerConcurrency,
  })
  process(job: Job<DebugJobData>): Promise<void> {
    return this.debug(job.data.runId);
  }

  /** At shutdown (the queue takes no new jobs by now) the running agents are aborted. */
  drain(): Promise<void> {
    this.active.abort('shutdown');
    return Promise.resolve();
  }

  async debug(runId: string): Promise<void> {
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      try {
        while (
          (await this.followups.hasUndelivered(runId)) &&
          (await this.window.inWindow(runId))
        ) {
          await this.runAgent(runId);
        }
      } catch (err) {
        this.logger.error(`debug agent for run ${runId} failed: ${(err as Error).message}`);
      }
      await this.window.deactivate(runId);
      // A follow-up that raced with the end saw the flag still set and relies on this job.
      if (!(await this.followups.hasUndelivered(runId))) return;
      if (!(await this.window.activateInPlace(runId))) return;
    }
  }

  private async runAgent(runId: string): Promise<void> {
    const run = await this.records.find(runId);
    if (!run) throw new Error(`run ${runId} is gone`);
    const model = this.models.find(run.modelId ?? this.models.catalog.defaultModelId);
    const harness = this.harnesses.find('oz');
    if (!model || !harness) throw new Error('no model or oz harness for the debug agent');
    const until = new Date(String(run.statusMessage?.session_debug_until)).getTime();
    const remainingMs = Number.isFinite(until) ? Math.max(0, until - Date.now()) : 0;
    const stale = new AbortController();
    const signal = AbortSignal.any([
      this.active.signal,
      AbortSignal.timeout(remainingMs),
      stale.signal,
    ]);
    const environment = run.environmentId
      ? await this.environments.environment(run.teamId, run.environmentId)
      : null;
    // Resolved once: the sandbox's placeholders are those its egress proxy replaces.
    const secrets = await this.runSecrets.resolve(run);
    // The debug agent is as untrusted as the run: it works in a sandbox of its own.
    const sandbox = await this.sandboxes.open({
      runId: run.id,
      executionId: run.executionCount,
      teamId: run.teamId,
      workspaceDir: this.workspaces.dirFor(run.id),
      environment: environment?.config ?? null,
      apiUrl: internalApiUrl(this.config),
      egress: { secrets: secrets.bound },
    });
    try {
      // Its writes are fenced: a continuation claiming the run makes them stale (refused).
      const token: ExecutionToken = {
        runId: run.id,
        executionId: run.executionCount,
        holder: 'debug-agent',
        onStale: () => stale.abort(),
      };
      const context = await this.contexts.build(run, token, model, signal, sandbox, secrets.env);
      // A run whose setup failed has no conversation yet: drop its task prompt, keep the follow-ups.
      const followups = context.history.length
        ? context.userMessages
        : context.userMessages.slice(1);
      await harness.run({
        ...context,
        userMessages: [debugPreamble(String(run.statusMessage?.message ?? '')), ...followups],
      });
    } finally {
      await sandbox.close();
    }
  }
}
