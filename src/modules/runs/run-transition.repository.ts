import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { jsonColumn } from '../../database/json-column';
import { Run } from './entities/run.entity';
import type { LoggedRun } from './run-log-lines';
import type { RunState } from './run-state';

/** The `runs` columns of a LoggedRun as MySQL returns them. */
interface LoggedRunRow {
  id: string;
  team_id: string;
  model_id: string | null;
  execution_count: number | string;
  status_message: string | LoggedRun['statusMessage'];
  request_usage: string | LoggedRun['requestUsage'];
  created_at: Date;
  started_at: Date | null;
  updated_at: Date;
}

/** A run's state change on the `runs` table (RunTransitions), in the transition's transaction. */
@Injectable()
export class RunTransitionRepository {
  /**
   * The guarded UPDATE of a transition: writes `set` (entity property names; a function is SQL,
   * `:clockAt` is `now`) while the run is in one of `allowed` and matches `where`. Whether it did.
   */
  async move(
    manager: EntityManager,
    runId: string,
    allowed: RunState[],
    set: Record<string, unknown>,
    now: Date,
    where?: { sql: string; params: Record<string, unknown> },
  ): Promise<boolean> {
    let query = manager
      .createQueryBuilder()
      .update(Run)
      .set(set as never)
      .where('id = :runId', { runId, clockAt: now })
      // FIELD(), not IN: the row is reached by its primary key alone. Through the state index the
      // UPDATE took next-key locks there, and deadlocked with a transaction that moves the same
      // row's state twice (CLAIMED, then INPROGRESS, as claims once did) while it waited.
      .andWhere('FIELD(state, :...allowed) > 0', { allowed });
    if (where) query = query.andWhere(where.sql, where.params);
    const result = await query.execute();
    return Boolean(result.affected);
  }

  /** What a run that just started or ended is measured and logged by. */
  async movedRun(manager: EntityManager, runId: string): Promise<LoggedRun | null> {
    const [row] = (await manager.query(
      `SELECT id, team_id, model_id, execution_count, status_message, request_usage, created_at,
              started_at, updated_at
         FROM runs WHERE id = ?`,
      [runId],
    )) as LoggedRunRow[];
    if (!row) return null;
    return {
      id: row.id,
      teamId: row.team_id,
      modelId: row.model_id,
      executionCount: Number(row.execution_count),
      statusMessage: jsonColumn(row.status_message),
      requestUsage: jsonColumn(row.request_usage),
      createdAt: row.created_at,
      startedAt: row.started_at,
      updatedAt: row.updated_at,
    };
  }
}
