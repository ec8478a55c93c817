import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { RunState } from './run-state';

/**
 * Runs BLOCKED on approval requests, for the approvals module (its expiry sweep and decisions):
 * the `runs` and `run_approvals` statements it needs. `manager` joins a caller's transaction.
 */
@Injectable()
export class BlockedRunRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** BLOCKED runs waiting since before `cutoff` (their oldest undecided request, else the block). */
  async blockedBefore(cutoff: Date, limit: number): Promise<string[]> {
    const due = (await this.dataSource.query(
      `SELECT r.id FROM runs r
        WHERE r.state = 'BLOCKED'
          AND COALESCE(
                (SELECT MIN(a.requested_at) FROM run_approvals a
                  WHERE a.run_id = r.id AND a.decision IS NULL),
                r.updated_at) < ?
        LIMIT ${Number(limit)}`,
      [cutoff],
    )) as { id: string }[];
    return due.map((row) => row.id);
  }

  /** Locks the run's row (inside `manager`'s transaction); its state and last update, null if none. */
  async lock(
    manager: EntityManager,
    runId: string,
  ): Promise<{ state: RunState; updatedAt: Date } | null> {
    const [run] = (await manager.query(
      `SELECT state, updated_at FROM runs WHERE id = ? FOR UPDATE`,
      [runId],
    )) as { state: RunState; updated_at: Date }[];
    return run ? { state: run.state, updatedAt: run.updated_at } : null;
  }

  /** When the run's oldest undecided approval request was made; null for none. */
  async oldestUndecidedAt(manager: EntityManager, runId: string): Promise<Date | null> {
    const [oldest] = (await manager.query(
      `SELECT MIN(requested_at) AS at FROM run_approvals WHERE run_id = ? AND decision IS NULL`,
      [runId],
    )) as { at: Date | null }[];
    return oldest?.at ?? null;
  }
}
