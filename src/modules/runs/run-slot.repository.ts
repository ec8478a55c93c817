import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Run } from './entities/run.entity';
import type { SlotUse, WaitingRun } from './run-slots';
import { SqlRepository } from '../../database/sql-repository';

/** Self-hosted runs are their workers' to pace: only runs on Ambient's own workers hold slots. */
const OWN_WORKERS = 'worker_host IS NULL';
const RUNNING = "state IN ('CLAIMED', 'INPROGRESS')";
const ACTIVE = "state IN ('QUEUED', 'CLAIMED', 'INPROGRESS')";

/** Which runs count against a limit: those holding a slot, or those too that queue for one. */
export type SlotStates = 'running' | 'active';
const STATES: Record<SlotStates, string> = { running: RUNNING, active: ACTIVE };

/**
 * The `runs` table's statements of `max_concurrent_runs` (RunCapacity): the slots a team's or an
 * agent's runs hold, and the runs waiting for one (`at_capacity`). `manager` joins a caller's
 * transaction.
 */
@Injectable()
export class RunSlotRepository extends SqlRepository {
  /** The team's (and the run's executor's) runs in `states` on Ambient's own workers. */
  async use(
    run: Pick<Run, 'teamId' | 'executorId'>,
    states: SlotStates,
    manager?: EntityManager,
  ): Promise<SlotUse> {
    const [row] = (await this.db(manager).query(
      `SELECT COUNT(*) AS team, COALESCE(SUM(executor_id <=> ?), 0) AS agent FROM runs
        WHERE team_id = ? AND ${STATES[states]} AND ${OWN_WORKERS}`,
      [run.executorId, run.teamId],
    )) as { team: string | number; agent: string | number }[];
    return { team: Number(row.team), agent: run.executorId ? Number(row.agent) : 0 };
  }

  /** Marks the run (still QUEUED at that execution) as waiting for a slot; false if it moved on. */
  async markWaiting(
    manager: EntityManager,
    run: Pick<Run, 'id' | 'executionCount'>,
  ): Promise<boolean> {
    const result = await manager
      .getRepository(Run)
      .update(
        { id: run.id, state: 'QUEUED', executionCount: run.executionCount },
        { atCapacity: true },
      );
    return Boolean(result.affected);
  }

  /** Whether the team has a run waiting for a slot. */
  async anyWaiting(teamId: string): Promise<boolean> {
    const rows = (await this.db().query(
      `SELECT 1 FROM runs WHERE team_id = ? AND state = 'QUEUED' AND at_capacity = 1 LIMIT 1`,
      [teamId],
    )) as unknown[];
    return rows.length > 0;
  }

  /** The team's runs holding a slot, by executor ('' for none). */
  async runningByExecutor(teamId: string): Promise<Map<string, number>> {
    const running = (await this.db().query(
      `SELECT executor_id, COUNT(*) AS n FROM runs
        WHERE team_id = ? AND ${RUNNING} AND ${OWN_WORKERS} GROUP BY executor_id`,
      [teamId],
    )) as { executor_id: string | null; n: string | number }[];
    return new Map(running.map((r) => [r.executor_id ?? '', Number(r.n)]));
  }

  /** The team's queued runs on Ambient's own workers, oldest first (at most `limit`). */
  async queued(teamId: string, limit: number): Promise<WaitingRun[]> {
    const rows = (await this.db().query(
      `SELECT id, executor_id, at_capacity FROM runs
        WHERE team_id = ? AND state = 'QUEUED' AND ${OWN_WORKERS}
        ORDER BY created_at, id LIMIT ${Number(limit)}`,
      [teamId],
    )) as { id: string; executor_id: string | null; at_capacity: number | string }[];
    return rows.map<WaitingRun>((r) => ({
      id: r.id,
      executorId: r.executor_id,
      atCapacity: Number(r.at_capacity) === 1,
    }));
  }

  /** The team's runs holding a slot and those waiting for one. */
  async teamSlots(teamId: string): Promise<{ running: number; waiting: number }> {
    const [row] = (await this.db().query(
      `SELECT COALESCE(SUM(${RUNNING}), 0) AS running,
              COALESCE(SUM(state = 'QUEUED' AND at_capacity = 1), 0) AS waiting
         FROM runs WHERE team_id = ? AND ${ACTIVE} AND ${OWN_WORKERS}`,
      [teamId],
    )) as { running: string | number; waiting: string | number }[];
    return { running: Number(row?.running ?? 0), waiting: Number(row?.waiting ?? 0) };
  }

  /** Teams with runs waiting for a slot, by id, after `after` when given; at most `limit`. */
  async teamsWaiting(limit: number, after?: string): Promise<string[]> {
    const rows = (await this.db().query(
      `SELECT DISTINCT team_id FROM runs
        WHERE at_capacity = 1 AND state = 'QUEUED'${after === undefined ? '' : ' AND team_id > ?'}
        ORDER BY team_id LIMIT ${Number(limit)}`,
      after === undefined ? [] : [after],
    )) as { team_id: string }[];
    return rows.map((r) => r.team_id);
  }

  /** The run's team, null for no such run. */
  async teamOf(runId: string): Promise<string | null> {
    const [row] = (await this.db().query(`SELECT team_id FROM runs WHERE id = ?`, [runId])) as {
      team_id: string;
    }[];
    return row?.team_id ?? null;
  }
}
