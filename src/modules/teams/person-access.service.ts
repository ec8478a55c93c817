import { Injectable } from '@nestjs/common';
import { EntityManager, IsNull } from 'typeorm';
import { ApiKey } from './api-key.entity';
import { ApiKeysService } from './api-keys.service';
import { UserSession } from './sessions/user-session.entity';

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
  constructor(private readonly apiKeys: ApiKeysService) {}

  async cut(manager: EntityManager, userId: string): Promise<CutAccess> {
    const revoked = await manager
      .getRepository(ApiKey)
      .update({ userId, runId: IsNull(), revokedAt: IsNull() }, { revokedAt: new Date() });
    const ended = await manager.getRepository(UserSession).delete({ userId });
    await this.apiKeys.userChanged(userId, manager);
    return { revokedKeys: revoked.affected ?? 0, endedSessions: ended.affected ?? 0 };
  }
}
