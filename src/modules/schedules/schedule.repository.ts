import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { Schedule } from './schedule.entity';

/**
 * The `schedules` rows: a team's schedules, their changes under the row's lock, and the due ones
 * a scheduler claims. `manager` joins a caller's transaction.
 */
@Injectable()
export class ScheduleRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The team's schedules by name. */
  list(teamId: string): Promise<Schedule[]> {
    return this.dataSource
      .getRepository(Schedule)
      .find({ where: { teamId }, order: { name: 'ASC', id: 'ASC' } });
  }

  findOfTeam(id: string, teamId: string): Promise<Schedule | null> {
    return this.dataSource.getRepository(Schedule).findOneBy({ id, teamId });
  }

  async insert(manager: EntityManager, schedule: Schedule): Promise<void> {
    await manager.getRepository(Schedule).insert(schedule);
  }

  async update(manager: EntityManager, id: string, patch: Partial<Schedule>): Promise<void> {
    await manager.getRepository(Schedule).update({ id }, patch);
  }

  async delete(manager: EntityManager, id: string): Promise<void> {
    await manager.getRepository(Schedule).delete({ id });
  }

  /** Locks the team's schedule (FOR UPDATE); null for no such schedule of the team. */
  lockOfTeam(manager: EntityManager, teamId: string, id: string): Promise<Schedule | null> {
    return manager
      .getRepository(Schedule)
      .createQueryBuilder('s')
      .setLock('pessimistic_write')
      .where('s.id = :id AND s.team_id = :teamId', { id, teamId })
      .getOne();
  }

  /** Locks the schedule (FOR UPDATE); null for no such schedule. */
  lock(manager: EntityManager, id: string): Promise<Schedule | null> {
    return manager
      .getRepository(Schedule)
      .createQueryBuilder('s')
      .setLock('pessimistic_write')
      .where('s.id = :id', { id })
      .getOne();
  }

  /**
   * Locks up to `limit` enabled schedules due at `now`, soonest first, skipping those another
   * scheduler holds (SKIP LOCKED); their ids.
   */
  async lockDue(manager: EntityManager, now: Date, limit: number): Promise<string[]> {
    const locked = (await manager.query(
      `SELECT id FROM schedules WHERE enabled = 1 AND next_run_at <= ?
          ORDER BY next_run_at LIMIT ? FOR UPDATE SKIP LOCKED`,
      [now, limit],
    )) as { id: string }[];
    return locked.map((r) => r.id);
  }

  findByIds(manager: EntityManager, ids: string[]): Promise<Schedule[]> {
    return manager.getRepository(Schedule).findBy({ id: In(ids) });
  }

  /** Of `ids` (not empty), those naming one of the team's schedules (a secret's scope). */
  async idsOfTeam(manager: EntityManager, teamId: string, ids: string[]): Promise<Set<string>> {
    const found = (await manager.query(`SELECT id FROM schedules WHERE team_id = ? AND id IN (?)`, [
      teamId,
      ids,
    ])) as { id: string }[];
    return new Set(found.map((row) => row.id));
  }
}
