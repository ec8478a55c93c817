import { existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeTenantFile } from '../../../common/tenant-files/tenant-file-writes';
import { TenantFileError } from '../../../common/tenant-files/tenant-files';
import { runCommand } from '../harness/command-runner';
import { newCommandId, withStreamedOutput } from '../harness/command-output';
import type { WorkspaceService } from './workspace.service';
import type { Sandbox } from '../sandbox/sandbox.types';
import { isSafeRepoPart, cloneUrl } from '../../environments';
import { gitClone, lastLines } from '../../../common/git';

const SETUP_DONE_MARKER = '.ambient-setup-done';
const TAIL_LINES = 20;

/** What preparing a workspace from an environment takes, wherever it happens. */
export interface SetupPlan {
  environmentId: string;
  repos: { owner: string; repo: string }[];
  setupCommands: string[];
  /** Per clone and per setup command. */
  timeoutMs: number;
  /** Clone URLs are `<gitUrlBase>/<owner>/<repo>.git`. */
  gitUrlBase: string;
  /** Authenticates clones of private repositories (never on a command line). */
  gitToken: string | null;
  /** Variables setup commands get beyond the clean command environment (the run's secrets). */
  env: Record<string, string>;
}

export interface SetupFailure {
  message: string;
  /** Null when the step was killed, timed out, or never ran. */
  exitCode: number | null;
}

export type EmitSetupEvent = (
  eventType: string,
  payload?: Record<string, unknown>,
) => Promise<void>;

export interface WorkspacePreparation {
  runId: string;
  /** The execution's sandbox: setup commands run inside it (clones are Ambient's own). */
  sandbox: Sandbox;
  environmentId: string;
  workspaces: WorkspaceService;
  signal: AbortSignal;
  emit: EmitSetupEvent;
  /** Called only when the workspace is not prepared yet; null when the environment is gone. */
  loadPlan(): Promise<SetupPlan | null>;
  /** Called just before a half-prepared (or new) workspace is wiped and prepared again. */
  beforeReset?(): Promise<void>;
  /** Snapshots of prepared workspaces (Ambient's workers); absent = set up every time. */
  snapshots?: WorkspaceSnapshots;
}

/** Prepared workspaces kept by key (`EnvironmentSnapshotsService`), so setup is done once. */
export interface WorkspaceSnapshots {
  /** The key of the workspace this plan prepares; null = none (no snapshot for it). */
  keyFor(plan: SetupPlan, signal: AbortSignal): Promise<string | null>;
  /** Fills the (empty) workspace from the key's snapshot; false when there is none. */
  restore(key: string, dir: string): Promise<boolean>;
  /** Keeps the prepared workspace under the key (never throws: a workspace not kept is a miss). */
  keep(key: string, dir: string): Promise<void>;
}

/** Whether the workspace at `dir` was prepared already (a follow-up execution continues in it). */
export function workspacePrepared(dir: string): boolean {
  return existsSync(join(dir, SETUP_DONE_MARKER));
}

/**
 * Prepares a run's workspace from its environment: clones each repository, then runs the setup
 * commands in order, each with a timeout. Done once per run (a marker file records success), so a
 * follow-up execution continues in the prepared workspace; a half-prepared one starts over.
 * With `snapshots`, a new run whose key (config, image, commits) has a snapshot starts from it
 * (`setup_cached`, no clone, no setup command), and a successful setup is kept for the next.
 * Used by Ambient's workers (WorkspaceSetupService) and by the self-hosted worker program; null
 * when the workspace is ready.
 */
export async function prepareWorkspace(prep: WorkspacePreparation): Promise<SetupFailure | null> {
  const { runId, workspaces, signal, emit, sandbox } = prep;
  const dir = workspaces.dirFor(runId);
  if (workspacePrepared(dir)) return null;
  const plan = await prep.loadPlan();
  if (!plan) {
    return { message: `environment "${prep.environmentId}" no longer exists`, exitCode: null };
  }
  await prep.beforeReset?.();
  // Emptied, not replaced: a container has this very directory mounted already.
  await mkdir(dir, { recursive: true });
  for (const entry of await readdir(dir))
    await rm(join(dir, entry), { recursive: true, force: true });
  await sandbox.adopt(dir);
  const key = prep.snapshots ? await prep.snapshots.keyFor(plan, signal) : null;
  if (key && (await prep.snapshots?.restore(key, dir))) {
    await sandbox.adopt(dir);
    // Not the key: it hashes the setup variables (secrets) among known inputs.
    await emit('setup_cached', { environment_id: plan.environmentId });
    await emit('worker_container_ready', { environment_id: plan.environmentId });
    return null;
  }
  await emit('environment_setup_started', { environment_id: plan.environmentId });

  const { timeoutMs } = plan;
  for (const { owner, repo } of plan.repos) {
    if (!isSafeRepoPart(owner) || !isSafeRepoPart(repo)) {
      await emit('repository_clone_failed', { owner, repo, error: 'invalid repository name' });
      return { message: `invalid repository ${owner}/${repo}`, exitCode: null };
    }
    const result = await gitClone({
      url: cloneUrl(plan.gitUrlBase, owner, repo),
      dest: repo,
      cwd: dir,
      token: plan.gitToken,
      timeoutMs,
      signal,
    });
    await prep.sandbox.adopt(join(dir, repo));
    if (result.exitCode !== 0) {
      if (!result.aborted)
        await emit('repository_clone_failed', { owner, repo, ...ending(result) });
      return {
        message: failure(`cloning ${owner}/${repo}`, result, timeoutMs),
        exitCode: result.exitCode,
      };
    }
    await emit('repository_cloned', { owner, repo });
  }
  for (const [index, command] of plan.setupCommands.entries()) {
    const step = { index, command, command_id: newCommandId() };
    const startedAt = Date.now();
    await emit('setup_command_started', step);
    const result = await withStreamedOutput(emit, step.command_id, (onOutput) =>
      runCommand({
        sandbox: prep.sandbox,
        command,
        env: workspaces.commandEnv(prep.sandbox, runId, {}, plan.env),
        timeoutMs,
        signal,
        onOutput,
      }),
    );
    const durationMs = Date.now() - startedAt;
    if (result.exitCode !== 0) {
      // Stopped (a cancel, a shutdown) is not the command's failure: the run says what happened.
      if (!result.aborted) {
        await emit('setup_command_failed', { ...step, ...ending(result), duration_ms: durationMs });
      }
      return {
        message: failure(`setup command ${index + 1} (${command})`, result, timeoutMs),
        exitCode: result.exitCode,
      };
    }
    await emit('setup_command_succeeded', { ...step, duration_ms: durationMs });
  }
  // The setup commands ran in the sandbox and may have left a link where the marker goes.
  try {
    await writeTenantFile(
      { root: dir, label: 'workspace' },
      SETUP_DONE_MARKER,
      new Date().toISOString(),
    );
  } catch (err) {
    if (!(err instanceof TenantFileError)) throw err;
    return { message: `environment setup failed: ${err.message}`, exitCode: null };
  }
  if (key) await prep.snapshots?.keep(key, dir);
  await emit('worker_container_ready', { environment_id: plan.environmentId });
  return null;
}

interface StepResult {
  exitCode: number | null;
  output: string;
  timedOut: boolean;
  aborted: boolean;
  limitHit?: string | null;
}

/** How a failed clone or setup command ended, for its timeline event. */
function ending(result: StepResult): Record<string, unknown> {
  return {
    exit_code: result.exitCode,
    timed_out: result.timedOut,
    ...(result.limitHit ? { killed: result.limitHit } : {}),
    output_tail: lastLines(result.output, TAIL_LINES),
  };
}

function failure(step: string, result: StepResult, timeoutMs: number): string {
  const why = result.timedOut
    ? `timed out after ${Math.round(timeoutMs / 1000)} s`
    : result.limitHit
      ? `was killed: ${result.limitHit}`
      : result.exitCode === null
        ? 'was killed'
        : `exited with code ${result.exitCode}`;
  const tail = lastLines(result.output, TAIL_LINES);
  return `environment setup failed: ${step} ${why}${tail ? `\n${tail}` : ''}`;
}
