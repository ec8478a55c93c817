import { Inject, Injectable, Optional } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { InvalidationBus } from '../../common/cache/broadcast-cache';
import { Invalidations } from '../../common/cache/invalidations';
import { newUid } from '../../common/ids';
import { USER_TOPIC } from './api-keys.service';
import { Team } from './team.entity';
import { TeamUserRepository } from './team-user.repository';
import { User, UserRole, UserType } from './user.entity';

@Injectable()
export class TeamsService {
  constructor(
    private readonly teamsAndUsers: TeamUserRepository,
    /** Cached principals of a renamed or deleted user are dropped on every replica. */
    @Optional() @Inject(Invalidations) private readonly invalidations?: InvalidationBus,
  ) {}

  findByName(name: string): Promise<Team | null> {
    return this.teamsAndUsers.teamByName(name);
  }

  async createTeam(name: string, manager?: EntityManager): Promise<Team> {
    const team: Team = { id: newUid(), name, createdAt: new Date() };
    await this.teamsAndUsers.insertTeam(team, manager);
    return team;
  }

  async createUser(
    team: Team,
    fields: { displayName: string; email?: string | null; role?: UserRole; type?: UserType },
    manager?: EntityManager,
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
    await this.teamsAndUsers.insertUser(user, manager);
    return user;
  }

  /** The team's first admin: the owner of keys made by the CLI and bootstrap. */
  async findAdmin(team: Team): Promise<User | null> {
    return this.teamsAndUsers.firstAdmin(team.id);
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
    await this.teamsAndUsers.insertUser(user, manager);
    return user;
  }

  async renameUser(manager: EntityManager, userId: string, displayName: string): Promise<void> {
    await this.teamsAndUsers.updateUser(userId, { displayName }, manager);
    await this.invalidations?.changed(manager, USER_TOPIC, [userId]);
  }

  /** Marks a user deleted: its keys stop authenticating; runs keep showing it as their executor. */
  async softDeleteUser(manager: EntityManager, userId: string, at: Date): Promise<void> {
    await this.teamsAndUsers.softDeleteUser(manager, userId, at);
    await this.invalidations?.changed(manager, USER_TOPIC, [userId]);
  }

  /** A service account (agent identity) that has not been deleted, or null. */
  findServiceAccount(id: string): Promise<User | null> {
    return this.teamsAndUsers.liveServiceAccount(id);
  }

  /** The team's service accounts (agent identities) that are not deleted, oldest first. */
  serviceAccounts(teamId: string): Promise<User[]> {
    return this.teamsAndUsers.liveServiceAccounts(teamId);
  }

  /** The team's own limit on usable agent identities; null means the configured default. */
  agentLimit(teamId: string): Promise<number | null> {
    return this.teamsAndUsers.agentLimit(teamId);
  }

  setAgentLimit(teamId: string, limit: number | null, manager?: EntityManager): Promise<void> {
    return this.teamsAndUsers.setAgentLimit(teamId, limit, manager);
  }

  async usersByIds(teamId: string, ids: string[]): Promise<Map<string, User>> {
    if (ids.length === 0) return new Map();
    const users = await this.teamsAndUsers.usersByIds(teamId, [...new Set(ids)]);
    return new Map(users.map((u) => [u.id, u]));
  }
}
