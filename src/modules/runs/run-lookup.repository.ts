import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Run } from './entities/run.entity';
import type { RunState } from './run-state';
import { selectEntities } from '../../database/entity-select';
import { SqlRepository } from '../../database/sql-repository';

/** A run row by id, for the modules around the run lifecycle. `manager` joins a caller's transaction. */
@Injectable()
export class RunLookupRepository extends SqlRepository {
  async find(runId: string, manager?: EntityManager): Promise<Run | null> {
    const [run] = await selectEntities(this.dataSource, Run, {
      where: 'id = ?',
      params: [runId],
      manager,
    });
    return run ?? null;
  }

  /** A run of `teamId`'s team (null: of any team; the caller holds another capability). */
  async findOfTeam(runId: string, teamId: string | null): Promise<Run | null> {
    if (teamId === null) return this.find(runId);
    const [run] = await selectEntities(this.dataSource, Run, {
      where: 'id = ? AND team_id = ?',
      params: [runId, teamId],
    });
    return run ?? null;
  }

  /** The run's state (EntityNotFoundError for no such run). */
  async stateOf(runId: string): Promise<RunState> {
    const { state } = await this.db()
      .getRepository(Run)
      .findOneOrFail({ select: { state: true }, where: { id: runId } });
    return state;
  }

  /** What a run's job is dispatched by (EntityNotFoundError for no such run). */
  dispatchRoute(runId: string): Promise<Pick<Run, 'id' | 'teamId' | 'workerHost'>> {
    return this.db()
      .getRepository(Run)
      .findOneOrFail({
        select: { id: true, teamId: true, workerHost: true },
        where: { id: runId },
      });
  }

  /** Of these runs, those of the team. */
  async findAllOfTeam(runIds: string[], teamId: string): Promise<Run[]> {
    if (runIds.length === 0) return [];
    return selectEntities(this.dataSource, Run, {
      where: 'id IN (?) AND team_id = ?',
      params: [runIds, teamId],
    });
  }

  /** Whether the team has a run with this id. */
  async exists(runId: string, teamId: string): Promise<boolean> {
    return this.db()
      .getRepository(Run)
      .exists({ where: { id: runId, teamId } });
  }

  /** The title, state and executor of each of these runs that exists. */
  async summaries(
    ids: string[],
  ): Promise<{ id: string; title: string; state: string; executorId: string | null }[]> {
    const rows = (await this.db().query(
      `SELECT id, title, state, executor_id FROM runs WHERE id IN (${ids.map(() => '?').join(', ')})`,
      ids,
    )) as { id: string; title: string; state: string; executor_id: string | null }[];
    return rows.map((r) => ({
      id: r.id,
      title: r.title,
      state: r.state,
      executorId: r.executor_id,
    }));
  }
}
