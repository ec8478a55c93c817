import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { runCommand } from '../harness/command-runner';
import { WorkspaceService } from '../harness/workspace.service';
import { TeamSecretsService } from '../secrets/team-secrets.service';
import { isSafeRepoPart } from './environment-config';
import { Environment } from './environment.entity';
import { cloneUrl, gitEnv, lastLines, shellQuote } from './setup-steps';

/** The team secret whose value authenticates clones of private repositories. */
export const GIT_TOKEN_SECRET = 'GITHUB_TOKEN';
const SETUP_DONE_MARKER = '.ambient-setup-done';
const TAIL_LINES = 20;

export type SetupOutcome =
  | { ok: true }
  | {
      ok: false;
      message: string;
      /** Added to the run's status_message: exit_code, and session_debug_until when kept. */
      statusExtra: Record<string, unknown>;
    };

type Failure = { message: string; exitCode: number | null; retentionMinutes: number | null };

export interface SetupRun {
  id: string;
  teamId: string;
  environmentId: string | null;
  /** The run's secrets as variables, for the setup commands (`RunSecretsService`). */
  secretEnv?: Record<string, string>;
}

type EmitEvent = (eventType: string, payload?: Record<string, unknown>) => Promise<void>;

/**
 * Prepares a run's workspace from its environment: clones each repository, then runs the setup
 * commands in order, each with a timeout. Done once per run (a marker file records success), so a
 * follow-up execution continues in the prepared workspace; a half-prepared one starts over.
 */
@Injectable()
export class WorkspaceSetupService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly workspaces: WorkspaceService,
    private readonly secrets: TeamSecretsService,
  ) {}

  async prepare(run: SetupRun, signal: AbortSignal, emit: EmitEvent): Promise<SetupOutcome> {
    if (!run.environmentId) return { ok: true };
    const failed = await this.attempt(run, run.environmentId, signal, emit);
    if (!failed) {
      await this.dataSource
        .getRepository(Environment)
        .update({ id: run.environmentId, setupFailed: true }, { setupFailed: false });
      return { ok: true };
    }
    // Cancelled or shut down mid-setup: not the environment's fault; the next execution starts over.
    if (signal.aborted) return { ok: false, message: failed.message, statusExtra: {} };
    await this.dataSource
      .getRepository(Environment)
      .update({ id: run.environmentId }, { setupFailed: true });
    const statusExtra: Record<string, unknown> = { exit_code: failed.exitCode };
    if (failed.retentionMinutes) {
      // Kept for a debug agent; the retention sweeper deletes it when the window closes.
      const until = new Date(Date.now() + failed.retentionMinutes * 60_000);
      await this.dataSource.query('UPDATE runs SET workspace_retained_until = ? WHERE id = ?', [
        until,
        run.id,
      ]);
      statusExtra.session_debug_until = until.toISOString();
    } else {
      await this.workspaces.remove(run.id);
    }
    return { ok: false, message: failed.message, statusExtra };
  }

  /** Null when the workspace is ready; what went wrong otherwise. */
  private async attempt(
    run: SetupRun,
    environmentId: string,
    signal: AbortSignal,
    emit: EmitEvent,
  ): Promise<Failure | null> {
    const dir = this.workspaces.dirFor(run.id);
    if (existsSync(join(dir, SETUP_DONE_MARKER))) return null;
    const environment = await this.dataSource
      .getRepository(Environment)
      .findOneBy({ id: environmentId });
    if (!environment) {
      const message = `environment "${environmentId}" no longer exists`;
      return { message, exitCode: null, retentionMinutes: null };
    }
    const retentionMinutes = environment.config.failure_session_retention_minutes ?? null;
    // A continuation after a closed debug window: the retention sweep must not delete this one.
    await this.dataSource.query('UPDATE runs SET workspace_retained_until = NULL WHERE id = ?', [
      run.id,
    ]);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    await emit('environment_setup_started', { environment_id: environment.id });

    const timeoutMs = this.config.environments.setupTimeoutSeconds * 1000;
    const token = await this.gitToken(run.teamId);
    for (const { owner, repo } of environment.config.github_repos ?? []) {
      if (!isSafeRepoPart(owner) || !isSafeRepoPart(repo)) {
        const message = `invalid repository ${owner}/${repo}`;
        return { message, exitCode: null, retentionMinutes };
      }
      const url = cloneUrl(this.config.environments.gitUrlBase, owner, repo);
      const result = await runCommand({
        command: `git clone --quiet -- ${shellQuote(url)} ${shellQuote(repo)}`,
        cwd: dir,
        env: this.workspaces.commandEnv(dir, run.id, gitEnv(token)),
        timeoutMs,
        signal,
      });
      if (result.exitCode !== 0) {
        return {
          message: failure(`cloning ${owner}/${repo}`, result, timeoutMs),
          exitCode: result.exitCode,
          retentionMinutes,
        };
      }
      await emit('repository_cloned', { owner, repo });
    }
    for (const [index, command] of (environment.config.setup_commands ?? []).entries()) {
      const result = await runCommand({
        command,
        cwd: dir,
        env: this.workspaces.commandEnv(dir, run.id, {}, run.secretEnv),
        timeoutMs,
        signal,
      });
      if (result.exitCode !== 0) {
        return {
          message: failure(`setup command ${index + 1} (${command})`, result, timeoutMs),
          exitCode: result.exitCode,
          retentionMinutes,
        };
      }
      await emit('setup_command_succeeded', { index, command });
    }
    await writeFile(join(dir, SETUP_DONE_MARKER), new Date().toISOString());
    await emit('worker_container_ready', { environment_id: environment.id });
    return null;
  }

  /** The team secret that authenticates clones of private repositories, if any. */
  async gitToken(teamId: string): Promise<string | null> {
    if (!this.config.secretsKey) return null;
    return this.secrets.reveal(teamId, GIT_TOKEN_SECRET);
  }
}

function failure(
  step: string,
  result: { exitCode: number | null; output: string; timedOut: boolean; aborted: boolean },
  timeoutMs: number,
): string {
  const why = result.timedOut
    ? `timed out after ${Math.round(timeoutMs / 1000)} s`
    : result.exitCode === null
      ? 'was killed'
      : `exited with code ${result.exitCode}`;
  const tail = lastLines(result.output, TAIL_LINES);
  return `environment setup failed: ${step} ${why}${tail ? `\n${tail}` : ''}`;
}
