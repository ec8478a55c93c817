import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DataSource, EntityManager } from 'typeorm';
import { newUid, newUuid } from '../../../common/ids';
import type { JsonObject } from '../../../common/json';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { WorkspaceService } from './workspace.service';
import type { Run } from '../../runs';
import { isTerminal, KeptWorkspaceRepository, RunEventRepository } from '../../runs';

const SWEEP_BATCH = 100;
/** Workspace directories are named by run id; a rename aside adds `.released-<uid>`. */
const RUN_DIR = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RELEASED_DIR = /^[0-9a-f-]{36}\.released-[A-Za-z0-9]+$/;

/** `idle_timeout_minutes` when the run's config leaves it unset (the Oz API default). */
export const DEFAULT_IDLE_TIMEOUT_MINUTES = 10;

/** When the workspace of an execution ending now is to be deleted. */
export function idleDeadline(idleTimeoutMinutes: number | undefined, now = Date.now()): Date {
  return new Date(now + (idleTimeoutMinutes ?? DEFAULT_IDLE_TIMEOUT_MINUTES) * 60_000);
}

/**
 * A workspace kept after its run ended — for follow-ups (`idle_timeout_minutes`) or for a debug
 * agent (`failure_session_retention_minutes`) — until `runs.workspace_retained_until`, on the
 * volume `runs.workspace_volume`. The deadline lives in MySQL, so a restart loses none; whichever
 * worker on that volume sweeps first deletes it. Directories no row accounts for (a crashed
 * worker's, one left on another volume when a continuation ran elsewhere, a half-deleted one) are
 * removed by `removeOrphans`.
 *
 * A sweep holds the run's row lock while it moves the directory aside and only touches runs that
 * are still ended, so it cannot interleave with a follow-up's continuation (`→ QUEUED` waits for
 * the lock); once a continuation is under way its execution owns the workspace (`takeOver`).
 */
@Injectable()
export class WorkspaceRetentionService {
  private readonly logger = new Logger('WorkspaceRetention');
  readonly volume: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: RunEventRepository,
    private readonly workspaces: WorkspaceService,
    private readonly records: KeptWorkspaceRepository,
  ) {
    this.volume = config.runs.workspaceVolume;
  }

  /** The run columns that keep this process's workspace of a run until `until`. */
  keepUntil(until: Date): Pick<Run, 'workspaceRetainedUntil' | 'workspaceVolume'> {
    return { workspaceRetainedUntil: until, workspaceVolume: this.volume };
  }

  /** Deletes the workspace of every ended run on this volume whose deadline has passed. */
  async releaseExpired(): Promise<number> {
    const ids = await this.records.expiredKeptWorkspaces(this.volume, new Date(), SWEEP_BATCH);
    let released = 0;
    for (const id of ids) {
      try {
        if (await this.releaseIfExpired(id)) released++;
      } catch (err) {
        this.logger.warn(`could not release the workspace of run ${id}: ${(err as Error).message}`);
      }
    }
    return released;
  }

  /** Deletes the workspace of an ended run whose deadline has passed; true when there was one. */
  async releaseIfExpired(runId: string): Promise<boolean> {
    return this.removeUnderRowLock(runId, async (manager, moveAside) => {
      const kept = await this.records.lockExpiredKeptWorkspace(
        manager,
        runId,
        this.volume,
        new Date(),
      );
      if (!kept) return;
      const moved = await moveAside();
      await this.records.forgetKeptWorkspace(runId, manager, true);
      if (moved) await this.recordRelease(manager, runId, kept.executionCount, kept.until);
    });
  }

  /**
   * For an execution starting on a run that had ended (the run is claimed, no sweep touches it
   * now): a workspace still within its deadline is taken over as it is; one whose deadline passed
   * before a sweep got to it is deleted first, so the execution starts from a fresh workspace.
   * One kept on another volume cannot be reached: the execution starts afresh here and that
   * volume's orphan sweep removes the old directory.
   */
  async takeOver(runId: string, executionId: number): Promise<void> {
    const kept = await this.records.keptWorkspace(runId);
    const until = kept?.until;
    if (!kept || !until) return;
    const here = kept.volume === null || kept.volume === this.volume;
    if (here && until.getTime() <= Date.now()) {
      const trash = await this.moveAside(runId);
      if (trash) {
        await rm(trash, { recursive: true, force: true });
        await this.recordRelease(this.dataSource.manager, runId, executionId, until);
      }
    }
    await this.records.forgetKeptWorkspace(runId);
  }

  /**
   * Deletes the directories under the workspace root that nothing accounts for: half-deleted
   * ones (`.released-…`, a crash between rename and delete) and those of runs that are gone, or
   * ended without a workspace kept on this volume. A run still queued or executing keeps its
   * directory (it may be this volume's, or stale until the run ends). Each deletion holds the
   * run's row lock, like a sweep, so no continuation can start using the directory meanwhile.
   */
  async removeOrphans(): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.workspaces.root);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    let removed = 0;
    for (const name of names.filter((n) => RELEASED_DIR.test(n))) {
      await rm(join(this.workspaces.root, name), { recursive: true, force: true });
      removed++;
    }
    const runIds = names.filter((n) => RUN_DIR.test(n));
    for (let i = 0; i < runIds.length; i += SWEEP_BATCH) {
      for (const runId of await this.unaccountedFor(runIds.slice(i, i + SWEEP_BATCH))) {
        try {
          if (await this.removeIfUnaccountedFor(runId)) removed++;
        } catch (err) {
          this.logger.warn(
            `could not remove the workspace of run ${runId}: ${(err as Error).message}`,
          );
        }
      }
    }
    return removed;
  }

  /** Of these run ids, those whose directory on this volume no run row accounts for. */
  private async unaccountedFor(runIds: string[]): Promise<string[]> {
    const accounted = await this.records.accountingForWorkspaces(runIds, this.volume);
    return runIds.filter((id) => !accounted.has(id));
  }

  private removeIfUnaccountedFor(runId: string): Promise<boolean> {
    return this.removeUnderRowLock(runId, async (manager, moveAside) => {
      const run = await this.records.lockWorkspaceOwner(manager, runId);
      const keptHere = run && run.until !== null && [null, this.volume].includes(run.volume);
      if (!run || (isTerminal(run.state) && !keptHere)) await moveAside();
    });
  }

  /**
   * Runs `decide` in a transaction (it locks the run's row); the directory it moves aside is
   * deleted after the commit. True when a directory was removed.
   */
  private async removeUnderRowLock(
    runId: string,
    decide: (manager: EntityManager, moveAside: () => Promise<boolean>) => Promise<void>,
  ): Promise<boolean> {
    let trash: string | null = null;
    try {
      await this.dataSource.transaction((manager) =>
        decide(manager, async () => {
          trash = await this.moveAside(runId);
          return trash !== null;
        }),
      );
    } finally {
      if (trash) await rm(trash, { recursive: true, force: true });
    }
    return trash !== null;
  }

  /** Renames the workspace out of the way (atomic: nothing half-deleted is ever reused). */
  private async moveAside(runId: string): Promise<string | null> {
    const trash = `${this.workspaces.dirFor(runId)}.released-${newUid(8)}`;
    try {
      await rename(this.workspaces.dirFor(runId), trash);
      return trash;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  private async recordRelease(
    manager: EntityManager,
    runId: string,
    executionId: number,
    until: Date,
  ): Promise<void> {
    const payload: JsonObject = { retained_until: until.toISOString() };
    await this.events.insert(manager, {
      eventUuid: newUuid(),
      runId,
      executionId,
      eventType: 'workspace_released',
      occurredAt: new Date(),
      payload,
    });
  }
}
