import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { User } from '../user.entity';
import { UserSession } from './user-session.entity';

/** The `user_sessions` table's statements. `manager` joins a caller's transaction. */
@Injectable()
export class UserSessionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Inserts a session, then deletes up to 100 sessions expired before `now`. */
  async insertSweepingExpired(manager: EntityManager, session: UserSession, now: Date) {
    await manager.getRepository(UserSession).insert(session);
    await manager.query(`DELETE FROM user_sessions WHERE expires_at < ? LIMIT 100`, [now]);
  }

  byId(id: string): Promise<UserSession | null> {
    return this.dataSource.getRepository(UserSession).findOneBy({ id });
  }

  /** The session's user, if it is still in the session's team and not deleted. */
  liveUserOf(session: Pick<UserSession, 'userId' | 'teamId'>): Promise<User | null> {
    return this.dataSource
      .getRepository(User)
      .createQueryBuilder('u')
      .where('u.id = :id AND u.team_id = :teamId AND u.deleted_at IS NULL', {
        id: session.userId,
        teamId: session.teamId,
      })
      .getOne();
  }

  /** Ids of the live sessions (their user live too) whose id starts with one of `prefixes`. */
  async liveIdsStartingWith(prefixes: string[]): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT s.id FROM user_sessions s JOIN users u ON u.id = s.user_id AND u.team_id = s.team_id
        WHERE u.deleted_at IS NULL AND s.expires_at > ?
          AND (${prefixes.map(() => 's.id LIKE ?').join(' OR ')})`,
      [new Date(), ...prefixes],
    )) as { id: string }[];
    return rows.map((row) => row.id);
  }

  /** Deletes a session; answers whether there was one. */
  async delete(id: string): Promise<boolean> {
    const result = await this.dataSource.getRepository(UserSession).delete({ id });
    return (result.affected ?? 0) > 0;
  }

  /** Deletes every session of a user; answers how many. */
  async deleteAllOfUser(manager: EntityManager, userId: string): Promise<number> {
    const ended = await manager.getRepository(UserSession).delete({ userId });
    return ended.affected ?? 0;
  }
}
