import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { ScimToken } from './scim-token.entity';

/** The `scim_tokens` table's statements. `manager` joins a caller's transaction. */
@Injectable()
export class ScimTokenRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, row: ScimToken): Promise<void> {
    await manager.getRepository(ScimToken).insert(row);
  }

  /** The team's tokens, oldest first. */
  list(teamId: string): Promise<ScimToken[]> {
    return this.dataSource
      .getRepository(ScimToken)
      .find({ where: { teamId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** Revokes one of the team's tokens (the first revocation time stays); null when unknown. */
  async revoke(manager: EntityManager, teamId: string, id: string): Promise<ScimToken | null> {
    const tokens = manager.getRepository(ScimToken);
    await tokens.update({ id, teamId, revokedAt: IsNull() }, { revokedAt: new Date() });
    return tokens.findOneBy({ id, teamId });
  }

  /** The live (not revoked) token with this lookup prefix, or null. */
  liveByPrefix(prefix: string): Promise<ScimToken | null> {
    return this.dataSource.getRepository(ScimToken).findOneBy({ prefix, revokedAt: IsNull() });
  }

  async markUsed(id: string): Promise<void> {
    await this.dataSource.getRepository(ScimToken).update({ id }, { lastUsedAt: new Date() });
  }
}
