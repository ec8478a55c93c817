import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { User } from '../user.entity';

/**
 * The `users` statements of SCIM: a team's people (deactivated ones included) as its SCIM client
 * pages and changes them. `manager` joins a caller's transaction.
 */
@Injectable()
export class ScimUserRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** How many of the team's people there are, and a page of them (by email when given). */
  async page(
    teamId: string,
    userName: string | undefined,
    page: { start: number; count: number },
  ): Promise<{ total: number; users: User[] }> {
    const query = this.dataSource
      .getRepository(User)
      .createQueryBuilder('u')
      .where("u.team_id = :teamId AND u.type = 'user'", { teamId });
    if (userName !== undefined) query.andWhere('u.email = :userName', { userName });
    const total = await query.getCount();
    const users = page.count
      ? await query
          .orderBy('u.created_at', 'ASC')
          .addOrderBy('u.id', 'ASC')
          .offset(page.start - 1)
          .limit(page.count)
          .getMany()
      : [];
    return { total, users };
  }

  /** One of the team's people, or null. */
  person(teamId: string, id: string): Promise<User | null> {
    return this.dataSource.getRepository(User).findOneBy({ id, teamId, type: 'user' });
  }

  /** One of the team's people, locked until `manager`'s transaction ends; null when none. */
  lockedPerson(manager: EntityManager, teamId: string, id: string): Promise<User | null> {
    return manager
      .getRepository(User)
      .createQueryBuilder('u')
      .setLock('pessimistic_write')
      .where("u.id = :id AND u.team_id = :teamId AND u.type = 'user'", { id, teamId })
      .getOne();
  }

  async setDeletedAt(manager: EntityManager, id: string, deletedAt: Date | null): Promise<void> {
    await manager.getRepository(User).update({ id }, { deletedAt });
  }
}
