import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Run } from './entities/run.entity';
import { RunState, TERMINAL_STATES } from './run-state';
import { SqlRepository } from '../../database/sql-repository';

const ENDED = TERMINAL_STATES.map((state) => `'${state}'`).join(', ');
/** Rows of this volume: older rows, kept before volumes were recorded, belong to every volume. */
const ON_VOLUME = '(workspace_volume = ? OR workspace_volume IS NULL)';

/** Where a run's workspace is kept after it ended, if it is. */
export interface KeptWorkspace {
  until: Date | null;
  volume: string | null;
}

/**
 * Kept workspaces of ended runs (`runs.workspace_retained_until`, `runs.workspace_volume`): keeping,
 * forgetting and sweeping them, and whether an execution may still use its workspace.
 */
@Injectable()
export class KeptWorkspaceRepository extends SqlRepository {
  async keptWorkspace(runId: string): Promise<KeptWorkspace | null> {
    const rows = (await this.db().query(
      'SELECT workspace_retained_until AS until, workspace_volume AS volume FROM runs WHERE id = ?',
      [runId],
    )) as KeptWorkspace[];
    return rows[0] ?? null;
  }

  async keepWorkspace(runId: string, until: Date, volume: string): Promise<void> {
    await this.db().query(
      'UPDATE runs SET workspace_retained_until = ?, workspace_volume = ? WHERE id = ?',
      [until, volume, runId],
    );
  }

  /** Keeps the workspace of a cancelled execution; false when the run moved on meanwhile. */
  async keepCancelledWorkspace(
    runId: string,
    executionId: number,
    until: Date,
    volume: string,
  ): Promise<boolean> {
    const kept = await this.db()
      .getRepository(Run)
      .update(
        { id: runId, state: 'CANCELLED', executionCount: executionId },
        { workspaceRetainedUntil: until, workspaceVolume: volume },
      );
    return (kept.affected ?? 0) > 0;
  }

  /** Forgets the kept workspace; with `endDebugWindow`, the debug agent flag goes too. */
  async forgetKeptWorkspace(
    runId: string,
    manager?: EntityManager,
    endDebugWindow = false,
  ): Promise<void> {
    const flag = endDebugWindow
      ? `, status_message = JSON_REMOVE(status_message, '$.debug_agent_active')`
      : '';
    await this.db(manager).query(
      `UPDATE runs SET workspace_retained_until = NULL, workspace_volume = NULL${flag}
        WHERE id = ?`,
      [runId],
    );
  }

  /** Ended runs on this volume whose kept workspace is due, earliest first. */
  async expiredKeptWorkspaces(volume: string, now: Date, limit: number): Promise<string[]> {
    const rows = (await this.db().query(
      `SELECT id FROM runs WHERE workspace_retained_until <= ? AND state IN (${ENDED})
          AND ${ON_VOLUME}
        ORDER BY workspace_retained_until LIMIT ${Number(limit)}`,
      [now, volume],
    )) as { id: string }[];
    return rows.map((row) => row.id);
  }

  /** Locks an ended run whose kept workspace on this volume is due (inside `manager`'s transaction). */
  async lockExpiredKeptWorkspace(
    manager: EntityManager,
    runId: string,
    volume: string,
    now: Date,
  ): Promise<{ executionCount: number; until: Date } | null> {
    const rows = (await manager.query(
      `SELECT execution_count AS executionCount, workspace_retained_until AS until FROM runs
        WHERE id = ? AND workspace_retained_until <= ? AND state IN (${ENDED})
          AND ${ON_VOLUME} FOR UPDATE`,
      [runId, now, volume],
    )) as { executionCount: number; until: Date }[];
    return rows[0] ?? null;
  }

  /** Of these run ids, those whose row accounts for a workspace directory on this volume. */
  async accountingForWorkspaces(runIds: string[], volume: string): Promise<Set<string>> {
    const rows = (await this.db().query(
      `SELECT id FROM runs WHERE id IN (?) AND (state NOT IN (${ENDED})
          OR (workspace_retained_until IS NOT NULL AND ${ON_VOLUME}))`,
      [runIds, volume],
    )) as { id: string }[];
    return new Set(rows.map((row) => row.id));
  }

  /** Locks the run's row (inside `manager`'s transaction) and reads its workspace columns. */
  async lockWorkspaceOwner(
    manager: EntityManager,
    runId: string,
  ): Promise<(KeptWorkspace & { state: RunState }) | null> {
    const rows = (await manager.query(
      `SELECT state, workspace_retained_until AS until, workspace_volume AS volume
         FROM runs WHERE id = ? FOR UPDATE`,
      [runId],
    )) as (KeptWorkspace & { state: RunState })[];
    return rows[0] ?? null;
  }

  /**
   * An execution is live while its run is claimed or in progress at that execution with a lease
   * not lapsed (a crashed worker's lapses), or while a debug agent may work in its kept workspace.
   */
  async executionIsLive(runId: string, executionId: number, now: Date): Promise<boolean> {
    const rows = (await this.db().query(
      `SELECT 1 FROM runs WHERE id = ? AND execution_count = ? AND (
         (state IN ('CLAIMED', 'INPROGRESS') AND lease_expires_at > ?)
         OR workspace_retained_until > ?)`,
      [runId, executionId, now, now],
    )) as unknown[];
    return rows.length > 0;
  }
}
