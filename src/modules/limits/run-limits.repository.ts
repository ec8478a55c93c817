import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { RunLimits } from './run-limits.entity';
import { SqlRepository } from '../../database/sql-repository';

/** The values of a limits row a change sets. */
export type LimitValues = Pick<
  RunLimits,
  'maxConcurrentRuns' | 'monthlyBudgetUsd' | 'maxRunCostUsd'
>;

/**
 * The `run_limits` rows: a team's (`agent_uid` = TEAM_SCOPE) and its agents'. `manager` joins a
 * caller's transaction; `lock` reads FOR UPDATE.
 */
@Injectable()
export class RunLimitsRepository extends SqlRepository {
  /**
   * Makes sure the scope's row exists and X-locks it: two first changes of a team never deadlock
   * on the gap a missing row would leave them both locking.
   */
  async ensureLocked(manager: EntityManager, teamId: string, scope: string): Promise<void> {
    await manager.query(
      `INSERT INTO run_limits (team_id, agent_uid, updated_at) VALUES (?, ?, ?)
       ON DUPLICATE KEY UPDATE updated_at = updated_at`,
      [teamId, scope, new Date()],
    );
  }

  async find(
    teamId: string,
    scope: string,
    manager?: EntityManager,
    lock = false,
  ): Promise<RunLimits | null> {
    let query = this.db(manager)
      .getRepository(RunLimits)
      .createQueryBuilder('l')
      .where('l.team_id = :teamId AND l.agent_uid = :scope', { teamId, scope });
    if (lock) query = query.setLock('pessimistic_write');
    return query.getOne();
  }

  /** The rows of these scopes, in key order (so two lockers never deadlock). */
  async ofScopes(
    manager: EntityManager,
    teamId: string,
    scopes: string[],
    lock: boolean,
  ): Promise<RunLimits[]> {
    let query = manager
      .getRepository(RunLimits)
      .createQueryBuilder('l')
      .where('l.team_id = :teamId AND l.agent_uid IN (:...scopes)', { teamId, scopes })
      .orderBy('l.agent_uid', 'ASC');
    if (lock) query = query.setLock('pessimistic_write');
    return query.getMany();
  }

  /** Every limits row of a team (its own and its agents'). */
  allOf(teamId: string): Promise<RunLimits[]> {
    return this.db().getRepository(RunLimits).findBy({ teamId });
  }

  async set(
    manager: EntityManager,
    teamId: string,
    scope: string,
    values: LimitValues,
  ): Promise<void> {
    await manager
      .getRepository(RunLimits)
      .update({ teamId, agentUid: scope }, { ...values, updatedAt: new Date() });
  }
}
