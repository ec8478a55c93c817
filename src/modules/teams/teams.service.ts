import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import type { InvalidationBus } from '../../common/cache/broadcast-cache';
import { Invalidations } from '../../common/cache/invalidations';
import { newUid } from '../../common/ids';
import { USER_TOPIC } from './api-keys.service';
import { Team } from './team.entity';
import { User, UserRole, UserType } from './user.entity';

@Injectable()
export class TeamsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    /** Cached principals of a renamed or deleted user are dropped on every replica. */
    @Optional() @Inject(Invalidations) private readonly invalidations?: InvalidationBus,
  ) {}

  findByName(name: string): Promise<Team | null> {
    return this.dataSource.getRepository(Team).findOneBy({ name });
  }

  async createTeam(name: string, manager = this.dataSource.manager): Promise<Team> {
    const team: Team = { id: newUid(), name, createdAt: new Date() };
    await manager.getRepository(Team).insert(team);
    return team;
  }

  async createUser(
    team: Team,
    fields: { displayName: string; email?: string | null; role?: UserRole; type?: UserType },
    manager = this.dataSource.manager,
  ): Promise<User> {
    const user: User = {
      id: newUid(),
      teamId: team.id,
      displayName: fields.displayName,
      email: fields.email ?? null,
      type: fields.type ?? 'user',
      role: fields.role ?? 'member',
      createdAt: new Date(),
    };
    await manager.getRepository(User).insert(user);
    return user;
  }

  /** The team's first admin: the owner of keys made by the CLI and bootstrap. */
  async findAdmin(team: Team): Promise<User | null> {
    return this.dataSource.getRepository(User).findOne({
      where: { teamId: team.id, role: 'admin', type: 'user' },
      order: { createdAt: 'ASC' },
    });
  }

  /** The user behind a new agent identity, inserted in the caller's transaction. */
  async createServiceAccount(
    manager: EntityManager,
    teamId: string,
    displayName: string,
  ): Promise<User> {
    const user: User = {
      id: newUid(),
      teamId,
      displayName,
      email: null,
      type: 'service_account',
      role: 'member',
      createdAt: new Date(),
    };
    await manager.getRepository(User).insert(user);
    return user;
  }

  async renameUser(manager: EntityManager, userId: string, displayName: string): Promise<void> {
    await manager.getRepository(User).update({ id: userId }, { displayName });
    await this.invalidations?.changed(manager, USER_TOPIC, [userId]);
  }

  /** Marks a user deleted: its keys stop authenticating; runs keep showing it as their executor. */
  async softDeleteUser(manager: EntityManager, userId: string, at: Date): Promise<void> {
    await manager.query(`UPDATE users SET deleted_at = ? WHERE id = ?`, [at, userId]);
    await this.invalidations?.changed(manager, USER_TOPIC, [userId]);
  }

  /** A service account (agent identity) that has not been deleted, or null. */
  findServiceAccount(id: string): Promise<User | null> {
    return this.dataSource
      .getRepository(User)
      .createQueryBuilder('u')
      .where("u.id = :id AND u.type = 'service_account' AND u.deleted_at IS NULL", { id })
      .getOne();
  }

  /** The team's service accounts (agent identities) that are not deleted, oldest first. */
  serviceAccounts(teamId: string): Promise<User[]> {
    return this.dataSource
      .getRepository(User)
      .createQueryBuilder('u')
      .where("u.team_id = :teamId AND u.type = 'service_account' AND u.deleted_at IS NULL", {
        teamId,
      })
      .orderBy('u.created_at', 'ASC')
      .addOrderBy('u.id', 'ASC')
      .getMany();
  }

  /** The team's own limit on usable agent identities; null means the configured default. */
  async agentLimit(teamId: string): Promise<number | null> {
    const rows = (await this.dataSource.query(`SELECT agent_limit FROM teams WHERE id = ?`, [
      teamId,
    ])) as { agent_limit: number | null }[];
    return rows[0]?.agent_limit ?? null;
  }

  async setAgentLimit(
    teamId: string,
    limit: number | null,
    manager = this.dataSource.manager,
  ): Promise<void> {
    await manager.query(`UPDATE teams SET agent_limit = ? WHERE id = ?`, [limit, teamId]);
  }

  async usersByIds(teamId: string, ids: string[]): Promise<Map<string, User>> {
    if (ids.length === 0) return new Map();
    const users = await this.dataSource
      .getRepository(User)
      .findBy({ teamId, id: In([...new Set(ids)]) });
    return new Map(users.map((u) => [u.id, u]));
  }
}
