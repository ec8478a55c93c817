import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ApiKeyRepository } from './api-key.repository';
import { ApiKeysService } from './api-keys.service';
import { UserSessionRepository } from './sessions/user-session.repository';

/** What cutting a person's access ended. */
export interface CutAccess {
  revokedKeys: number;
  endedSessions: number;
}

/**
 * Ends everything a person signs in with: their API keys (revoked, so they stay dead if the person
 * comes back) and their console sessions (deleted). Run-scoped keys are left to their runs. Every
 * replica drops the person's cached keys when `manager` commits, and the streams the keys and
 * sessions opened end at the revocation watch's next check.
 */
@Injectable()
export class PersonAccess {
  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly keys: ApiKeyRepository,
    private readonly sessions: UserSessionRepository,
  ) {}

  async cut(manager: EntityManager, userId: string): Promise<CutAccess> {
    const revokedKeys = await this.keys.revokePersonKeys(manager, userId);
    const endedSessions = await this.sessions.deleteAllOfUser(manager, userId);
    await this.apiKeys.userChanged(userId, manager);
    return { revokedKeys, endedSessions };
  }
}
