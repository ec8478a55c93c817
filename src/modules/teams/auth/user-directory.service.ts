import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { InvalidationBus } from '../../../common/cache/broadcast-cache';
import { Invalidations } from '../../../common/cache/invalidations';
import { newUid } from '../../../common/ids';
import { USER_TOPIC } from '../api-keys.service';
import { isTeamRole } from '../../../common/auth/roles';
import type { Principal } from '../../../common/auth/principal';
import type { User } from '../user.entity';
import type { DirectoryUser, UserDirectory } from './auth-strategy';
import { TeamUserRepository } from '../team-user.repository';

/** Ambient's users for strategies that authenticate people (UserDirectory). */
@Injectable()
export class UserDirectoryService implements UserDirectory {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly teamsAndUsers: TeamUserRepository,
    @Optional() @Inject(Invalidations) private readonly invalidations?: InvalidationBus,
  ) {}

  async principalOf(input: DirectoryUser): Promise<Principal | null> {
    if (!isTeamRole(input.role)) throw new Error(`unknown role "${String(input.role)}"`);
    const email = input.email.trim().toLowerCase();
    if (!email || email.length > 255) return null;
    const displayName = (input.displayName?.trim() || email).slice(0, 255);
    const team = await this.teamsAndUsers.teamByName(input.team);
    if (!team) return null;
    const user =
      (await this.teamsAndUsers.personByEmail(team.id, email)) ??
      // The team's row lock makes the first sight of a person create one user, not two.
      (await this.dataSource.transaction(async (m) => {
        await this.teamsAndUsers.lockTeam(m, team.id);
        const found = await this.teamsAndUsers.personByEmail(team.id, email, m);
        if (found) return found;
        const created: User = {
          id: newUid(),
          teamId: team.id,
          displayName,
          email,
          type: 'user',
          role: input.role,
          createdAt: new Date(),
        };
        await this.teamsAndUsers.insertUser(created, m);
        return created;
      }));
    // Deactivated through SCIM: the identity provider's deprovisioning holds for every strategy.
    if (user.deletedAt) return null;
    if (user.role !== input.role || user.displayName !== displayName) {
      await this.teamsAndUsers.updateUser(user.id, { role: input.role, displayName });
      // The person's API keys without a role of their own act with the new one at once.
      await this.invalidations?.changed(undefined, USER_TOPIC, [user.id]);
    }
    return {
      teamId: team.id,
      userId: user.id,
      keyId: `user:${user.id}`,
      userType: 'user',
      role: input.role,
      displayName,
      email,
    };
  }
}
