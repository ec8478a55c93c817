import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditLog, systemActor } from '../../audit';
import { KeyRevocationWatch } from '../key-revocation-watch.service';
import { PersonAccess } from '../person-access.service';
import type { User } from '../user.entity';
import { ScimError } from './scim-resources';
import type { ScimToken } from './scim-token.entity';
import { ScimUserRepository } from './scim-user.repository';

/**
 * The people of a team as its SCIM client sees them, and their deactivation: a deactivated person
 * is marked deleted (no key or session of theirs authenticates, on any replica), their keys are
 * revoked and sessions ended for good, and the streams those opened end at once here (at the
 * revocation watch's next check elsewhere). Reactivating lets them sign in again; their keys stay
 * revoked.
 */
@Injectable()
export class ScimUsersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly people: ScimUserRepository,
    private readonly access: PersonAccess,
    private readonly audit: AuditLog,
    private readonly streams: KeyRevocationWatch,
  ) {}

  /** A page of the team's people (deactivated ones included), by email when `userName` is given. */
  async list(
    teamId: string,
    userName: string | undefined,
    page: { start: number; count: number },
  ): Promise<{ total: number; users: User[] }> {
    return this.people.page(teamId, userName, page);
  }

  /** One of the team's people, or a SCIM 404. */
  async get(teamId: string, id: string): Promise<User> {
    const user = await this.people.person(teamId, id.slice(0, 64));
    if (!user) throw new ScimError(404, `User "${id}" not found`);
    return user;
  }

  /** Deactivates or reactivates a person (no change when already so); answers them as now. */
  async setActive(token: ScimToken, id: string, active: boolean): Promise<User> {
    const ended = await this.dataSource.transaction(async (manager) => {
      const user = await this.people.lockedPerson(manager, token.teamId, id.slice(0, 64));
      if (!user) throw new ScimError(404, `User "${id}" not found`);
      if (active === !user.deletedAt) return false;
      await this.people.setDeletedAt(manager, user.id, active ? null : new Date());
      const cut = active ? null : await this.access.cut(manager, user.id);
      const actor = systemActor(`scim:${token.id}`, `SCIM token "${token.name}"`);
      await this.audit.insert(manager, [
        this.audit.entry(
          { teamId: token.teamId, actor },
          active ? 'user.reactivate' : 'user.deactivate',
          { type: 'user', id: user.id },
          cut ? { revoked_keys: cut.revokedKeys, ended_sessions: cut.endedSessions } : {},
        ),
      ]);
      return !active;
    });
    if (ended) await this.streams.checkNow();
    return this.get(token.teamId, id);
  }
}
