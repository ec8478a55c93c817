import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { rename, rm } from 'node:fs/promises';
import { DataSource, EntityManager } from 'typeorm';
import { newUid, newUuid } from '../../common/ids';
import type { JsonObject } from '../../common/json';
import { WorkspaceService } from '../harness/workspace.service';
import { RunEvent } from '../runs/entities/run-event.entity';
import { TERMINAL_STATES } from '../runs/run-state';

const SWEEP_BATCH = 100;
const ENDED = TERMINAL_STATES.map((state) => `'${state}'`).join(', ');

/** `idle_timeout_minutes` when the run's config leaves it unset (the Oz API default). */
export const DEFAULT_IDLE_TIMEOUT_MINUTES = 10;

/** When the workspace of an execution ending now is to be deleted. */
export function idleDeadline(idleTimeoutMinutes: number | undefined, now = Date.now()): Date {
  return new Date(now + (idleTimeoutMinutes ?? DEFAULT_IDLE_TIMEOUT_MINUTES) * 60_000);
}

/**
 * A workspace kept after its run ended — for follow-ups (`idle_timeout_minutes`) or for a debug
 * agent (`failure_session_retention_minutes`) — until `runs.workspace_retained_until`. The
 * deadline lives in MySQL, so a restart loses none; whichever worker sweeps first deletes it.
 *
 * A sweep holds the run's row lock while it moves the directory aside and only touches runs that
 * are still ended, so it cannot interleave with a follow-up's continuation (`→ QUEUED` waits for
 * the lock); once a continuation is under way its execution owns the workspace (`takeOver`).
 */
@Injectable()
export class WorkspaceRetentionService {
  private readonly logger = new Logger('WorkspaceRetention');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly workspaces: WorkspaceService,
  ) {}

  /** Deletes the workspace of every ended run whose deadline has passed. */
  async releaseExpired(): Promise<number> {
    const rows = (await this.dataSource.query(
      `SELECT id FROM runs WHERE workspace_retained_until <= ? AND state IN (${ENDED})
        ORDER BY workspace_retained_until LIMIT ${SWEEP_BATCH}`,
      [new Date()],
    )) as { id: string }[];
    let released = 0;
    for (const { id } of rows) {
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
    let trash: string | null = null;
    try {
      await this.dataSource.transaction(async (manager) => {
        const rows = (await manager.query(
          `SELECT execution_count AS executionCount, workspace_retained_until AS until FROM runs
            WHERE id = ? AND workspace_retained_until <= ? AND state IN (${ENDED}) FOR UPDATE`,
          [runId, new Date()],
        )) as { executionCount: number; until: Date }[];
        if (rows.length === 0) return;
        trash = await this.moveAside(runId);
        await manager.query(
          `UPDATE runs SET workspace_retained_until = NULL,
             status_message = JSON_REMOVE(status_message, '$.debug_agent_active')
            WHERE id = ?`,
          [runId],
        );
        if (trash) await this.recordRelease(manager, runId, rows[0].executionCount, rows[0].until);
      });
    } finally {
      if (trash) await rm(trash, { recursive: true, force: true });
    }
    return trash !== null;
  }

  /**
   * For an execution starting on a run that had ended (the run is claimed, no sweep touches it
   * now): a workspace still within its deadline is taken over as it is; one whose deadline passed
   * before a sweep got to it is deleted first, so the execution starts from a fresh workspace.
   */
  async takeOver(runId: string, executionId: number): Promise<void> {
    const rows = (await this.dataSource.query(
      'SELECT workspace_retained_until AS until FROM runs WHERE id = ?',
      [runId],
    )) as { until: Date | null }[];
    const until = rows[0]?.until;
    if (!until) return;
    if (until.getTime() <= Date.now()) {
      const trash = await this.moveAside(runId);
      if (trash) {
        await rm(trash, { recursive: true, force: true });
        await this.recordRelease(this.dataSource.manager, runId, executionId, until);
      }
    }
    await this.dataSource.query('UPDATE runs SET workspace_retained_until = NULL WHERE id = ?', [
      runId,
    ]);
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
    await manager.getRepository(RunEvent).insert({
      eventUuid: newUuid(),
      runId,
      executionId,
      eventType: 'workspace_released',
      occurredAt: new Date(),
      payload,
    });
  }
}
