import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { WorkspaceService } from './workspace.service';
import { DockerSnapshot, EnvironmentSnapshotsService } from './environment-snapshots.service';
import type { Sandbox } from '../sandbox/sandbox.types';
import { KeptWorkspaceRepository } from '../../runs';
import { TeamSecretsService } from '../../secrets';
import { Environment, EnvironmentAccess } from '../../environments';
import {
  EmitSetupEvent,
  prepareWorkspace,
  SetupFailure,
  SetupPlan,
  workspacePrepared,
} from './workspace-preparation';

export type SetupOutcome =
  | { ok: true }
  | {
      ok: false;
      message: string;
      /** Added to the run's status_message: exit_code, and session_debug_until when kept. */
      statusExtra: Record<string, unknown>;
    };

export interface SetupRun {
  id: string;
  teamId: string;
  environmentId: string | null;
  /** The run's secrets as variables, for the setup commands (`RunSecretsService`). */
  secretEnv?: Record<string, string>;
}

/**
 * The server side of workspace preparation (`prepareWorkspace` does the work): plans it from the
 * stored environment and the team's secrets, and records the outcome — the environment's
 * `setup_failed`, and the debug window of a failed workspace. Ambient's workers prepare through
 * `prepare`; a self-hosted worker prepares on its machine with `planFor` sent in its start
 * response and reports back, which lands in `recordSuccess` / `recordFailure`.
 */
@Injectable()
export class WorkspaceSetupService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly environments: EnvironmentAccess,
    private readonly workspaces: WorkspaceService,
    private readonly secrets: TeamSecretsService,
    private readonly records: KeptWorkspaceRepository,
    private readonly snapshots: EnvironmentSnapshotsService,
  ) {}

  /**
   * A docker execution's snapshot (key, and the image to make its container from), to be known
   * before its sandbox is opened; null for other backends, a prepared workspace (a follow-up) or
   * no key.
   */
  async snapshotBeforeOpen(
    run: SetupRun,
    environment: Environment | null,
    backend: string | undefined,
    signal: AbortSignal,
  ): Promise<DockerSnapshot | null> {
    if (backend !== 'docker' || !environment || !this.snapshots.store) return null;
    if (workspacePrepared(this.workspaces.dirFor(run.id))) return null;
    const plan = await this.planFor(run, environment);
    return this.snapshots.beforeOpen(
      { teamId: run.teamId, environmentId: environment.id },
      plan,
      environment.config.docker_image ?? null,
      signal,
    );
  }

  /** `docker`: the execution's snapshot from `snapshotBeforeOpen` (its sandbox was opened with it). */
  async prepare(
    run: SetupRun,
    sandbox: Sandbox,
    signal: AbortSignal,
    emit: EmitSetupEvent,
    docker?: DockerSnapshot | null,
  ): Promise<SetupOutcome> {
    if (!run.environmentId) return { ok: true };
    const environmentId = run.environmentId;
    let retentionMinutes: number | null = null;
    let image: string | null = null;
    const failed = await prepareWorkspace({
      runId: run.id,
      sandbox,
      environmentId,
      workspaces: this.workspaces,
      signal,
      emit,
      loadPlan: async () => {
        const environment = await this.environment(run.teamId, environmentId);
        if (!environment) return null;
        retentionMinutes = environment.config.failure_session_retention_minutes ?? null;
        image = environment.config.docker_image ?? null;
        return this.planFor(run, environment);
      },
      // A continuation after a closed debug window: the retention sweep must not delete this one.
      beforeReset: () => this.clearRetention(run.id),
      snapshots: this.snapshots.for(
        { teamId: run.teamId, environmentId },
        sandbox,
        () => image,
        docker,
      ),
    });
    if (!failed) {
      await this.recordSuccess(run.teamId, environmentId);
      return { ok: true };
    }
    // Cancelled or shut down mid-setup: not the environment's fault; the next execution starts over.
    if (signal.aborted) return { ok: false, message: failed.message, statusExtra: {} };
    const statusExtra = await this.recordFailure(
      { id: run.id, teamId: run.teamId },
      environmentId,
      failed,
      retentionMinutes,
    );
    if (!retentionMinutes) await this.workspaces.remove(run.id);
    return { ok: false, message: failed.message, statusExtra };
  }

  /**
   * The environment as the run's team sees it: its own, or the version a guest team accepted;
   * null when it is gone or no longer shared with the team.
   */
  async environment(teamId: string, environmentId: string): Promise<Environment | null> {
    return (await this.environments.seenBy(teamId, environmentId))?.environment ?? null;
  }

  /**
   * How to prepare the run's workspace: repositories, commands, clone source and credentials. In
   * another team's environment the setup commands are the owner's: they get none of the run's
   * secrets (the agent still gets those its run lists).
   */
  async planFor(run: SetupRun, environment: Environment): Promise<SetupPlan> {
    const { environments } = this.config;
    return {
      environmentId: environment.id,
      repos: environment.config.github_repos ?? [],
      setupCommands: environment.config.setup_commands ?? [],
      timeoutMs: environments.setupTimeoutSeconds * 1000,
      gitUrlBase: environments.gitUrlBase,
      gitToken: await this.secrets.gitToken(run.teamId),
      env: environment.teamId === run.teamId ? (run.secretEnv ?? {}) : {},
    };
  }

  /** Clears `setup_failed` where the run's team sees it (a guest's on its grant). */
  async recordSuccess(teamId: string, environmentId: string): Promise<void> {
    await this.environments.recordSetupOutcome(teamId, environmentId, false);
  }

  /**
   * Marks the environment `setup_failed` (as the run's team sees it) and, with a retention, keeps the workspace for a debug
   * agent (the retention sweep deletes it when the window closes). Returns what the run's
   * status_message gains: exit_code, and session_debug_until when kept.
   */
  async recordFailure(
    run: { id: string; teamId: string },
    environmentId: string,
    failed: SetupFailure,
    retentionMinutes: number | null,
  ): Promise<Record<string, unknown>> {
    const runId = run.id;
    await this.environments.recordSetupOutcome(run.teamId, environmentId, true);
    const statusExtra: Record<string, unknown> = { exit_code: failed.exitCode };
    if (retentionMinutes) {
      const until = new Date(Date.now() + retentionMinutes * 60_000);
      await this.records.keepWorkspace(runId, until, this.config.runs.workspaceVolume);
      statusExtra.session_debug_until = until.toISOString();
    }
    return statusExtra;
  }

  private async clearRetention(runId: string): Promise<void> {
    await this.records.forgetKeptWorkspace(runId);
  }
}
