import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import { Team } from './team.entity';
import { User } from './user.entity';
import { selectEntities } from '../../database/entity-select';
import { SqlRepository } from '../../database/sql-repository';

/**
 * The `teams` and `users` tables' statements: teams/ itself and the other modules that read and
 * write their rows (sign-in, the console's `me`, environment sharing), which never query the
 * tables themselves. `manager` joins a caller's transaction.
 */
@Injectable()
export class TeamUserRepository extends SqlRepository {
  /** Locks the team's row until `manager`'s transaction ends (serialises what counts per team). */
  async lockTeam(manager: EntityManager, teamId: string): Promise<void> {
    await manager.query(`SELECT id FROM teams WHERE id = ? FOR UPDATE`, [teamId]);
  }

  async insertTeam(team: Team, manager?: EntityManager): Promise<void> {
    await this.db(manager).getRepository(Team).insert(team);
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

  /** The team's agent identity limit; null for the configured default (or no such team). */
  async agentLimit(teamId: string): Promise<number | null> {
    const rows = (await this.dataSource.query(`SELECT agent_limit FROM teams WHERE id = ?`, [
      teamId,
    ])) as { agent_limit: number | null }[];
    return rows[0]?.agent_limit ?? null;
  }

  async setAgentLimit(teamId: string, limit: number | null, manager?: EntityManager) {
    await this.db(manager).query(`UPDATE teams SET agent_limit = ? WHERE id = ?`, [limit, teamId]);
  }

  async insertUser(user: User, manager?: EntityManager): Promise<void> {
    await this.db(manager).getRepository(User).insert(user);
  }

  async updateUser(id: string, fields: Partial<User>, manager?: EntityManager): Promise<void> {
    await this.db(manager).getRepository(User).update({ id }, fields);
  }

  /** Marks a user deleted (the row stays: runs keep showing it as their executor). */
  async softDeleteUser(manager: EntityManager, userId: string, at: Date): Promise<void> {
    await manager.query(`UPDATE users SET deleted_at = ? WHERE id = ?`, [at, userId]);
  }

  /** The team's first admin (a person). */
  firstAdmin(teamId: string): Promise<User | null> {
    return this.db()
      .getRepository(User)
      .findOne({
        where: { teamId, role: 'admin', type: 'user' },
        order: { createdAt: 'ASC' },
      });
  }

  /** The team's person with this email: a live one first, else the oldest. */
  personByEmail(teamId: string, email: string, manager?: EntityManager): Promise<User | null> {
    return this.db(manager)
      .getRepository(User)
      .createQueryBuilder('u')
      .where("u.team_id = :teamId AND u.email = :email AND u.type = 'user'", { teamId, email })
      .orderBy('u.deleted_at IS NULL', 'DESC')
      .addOrderBy('u.created_at', 'ASC')
      .getOne();
  }

  /** A service account (agent identity) that has not been deleted, or null. */
  liveServiceAccount(id: string): Promise<User | null> {
    return this.db()
      .getRepository(User)
      .createQueryBuilder('u')
      .where("u.id = :id AND u.type = 'service_account' AND u.deleted_at IS NULL", { id })
      .getOne();
  }

  /** The team's service accounts that are not deleted, oldest first. */
  liveServiceAccounts(teamId: string): Promise<User[]> {
    return this.db()
      .getRepository(User)
      .createQueryBuilder('u')
      .where("u.team_id = :teamId AND u.type = 'service_account' AND u.deleted_at IS NULL", {
        teamId,
      })
      .orderBy('u.created_at', 'ASC')
      .addOrderBy('u.id', 'ASC')
      .getMany();
  }

  /** The team's users with these ids (not empty, no duplicates). */
  usersByIds(teamId: string, ids: string[]): Promise<User[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return selectEntities(this.dataSource, User, {
      where: 'team_id = ? AND id IN (?)',
      params: [teamId, ids],
    });
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
