import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { newUid } from '../../../common/ids';
import { hashApiKey, hashesEqual } from '../api-key-format';
import { ScimToken } from './scim-token.entity';

const TOKEN = /^scim_([A-Za-z0-9]{12})_[A-Za-z0-9]{32}$/;
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The SCIM clients' bearer tokens: `scim_<12-char lookup prefix>_<32-char secret>`, about 190
 * random bits, shown once when made. Every SCIM request reads its token (no cache): a revoked
 * token is refused on the next request on every replica.
 */
@Injectable()
export class ScimTokensService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Makes a token in `manager`'s transaction; the plain token is returned once, never stored. */
  async create(
    manager: EntityManager,
    fields: { teamId: string; name: string; createdBy: string },
  ): Promise<{ token: string; row: ScimToken }> {
    const prefix = newUid(12);
    const token = `scim_${prefix}_${newUid(32)}`;
    const row: ScimToken = {
      id: newUid(),
      ...fields,
      prefix,
      secretHash: hashApiKey(token),
      createdAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
    };
    await manager.getRepository(ScimToken).insert(row);
    return { token, row };
  }

  /** The team's tokens, oldest first (never their secret). */
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

  /** The live token a SCIM client presented, or null (unknown, malformed or revoked). */
  async authenticate(token: string): Promise<ScimToken | null> {
    const match = TOKEN.exec(token);
    if (!match) return null;
    const row = await this.dataSource
      .getRepository(ScimToken)
      .findOneBy({ prefix: match[1], revokedAt: IsNull() });
    if (!row || !hashesEqual(Buffer.from(row.secretHash), hashApiKey(token))) return null;
    if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      // Best effort: a lost timestamp must never fail the provider's request.
      this.dataSource
        .getRepository(ScimToken)
        .update({ id: row.id }, { lastUsedAt: new Date() })
        .catch(() => undefined);
    }
    return row;
  }
}
