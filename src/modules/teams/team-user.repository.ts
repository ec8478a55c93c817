import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { Team } from './team.entity';
import { User } from './user.entity';

/**
 * The `teams` and `users` rows other modules read and write (sign-in, the console's `me`,
 * environment sharing): they never query the tables themselves. `manager` joins a caller's
 * transaction.
 */
@Injectable()
export class TeamUserRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private db(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  /** Locks the team's row until `manager`'s transaction ends (serialises what counts per team). */
  async lockTeam(manager: EntityManager, teamId: string): Promise<void> {
    await manager.query(`SELECT id FROM teams WHERE id = ? FOR UPDATE`, [teamId]);
  }

  teamExists(teamId: string): Promise<boolean> {
    return this.db().getRepository(Team).existsBy({ id: teamId });
  }

  /** The team; throws (EntityNotFoundError) when there is none. */
  team(teamId: string): Promise<Team> {
    return this.db().getRepository(Team).findOneByOrFail({ id: teamId });
  }

  teamByName(name: string): Promise<Team | null> {
    return this.db().getRepository(Team).findOneBy({ name });
  }

  teamsByNames(names: string[]): Promise<Team[]> {
    return this.db()
      .getRepository(Team)
      .findBy({ name: In(names) });
  }

  /** The user an OpenID provider's person signed in as (deleted ones too), or null. */
  userByOidc(issuer: string, subject: string, manager?: EntityManager): Promise<User | null> {
    return this.db(manager)
      .getRepository(User)
      .findOneBy({ oidcIssuer: issuer, oidcSubject: subject });
  }

  async insertUser(manager: EntityManager, user: User): Promise<void> {
    await manager.getRepository(User).insert(user);
  }

  async updateUser(manager: EntityManager, id: string, fields: Partial<User>): Promise<void> {
    await manager.getRepository(User).update({ id }, fields);
  }

  /** The display names of the team's users (agents' service accounts too) with these ids. */
  async displayNames(teamId: string, ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const users = await this.db()
      .getRepository(User)
      .find({ select: { id: true, displayName: true }, where: { teamId, id: In(ids) } });
    return new Map(users.map((user) => [user.id, user.displayName]));
  }
}
