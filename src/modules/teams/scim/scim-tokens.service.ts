import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { newUid } from '../../../common/ids';
import { hashApiKey, hashesEqual } from '../api-key-format';
import { ScimToken } from './scim-token.entity';
import { ScimTokenRepository } from './scim-token.repository';

const TOKEN = /^scim_([A-Za-z0-9]{12})_[A-Za-z0-9]{32}$/;
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The SCIM clients' bearer tokens: `scim_<12-char lookup prefix>_<32-char secret>`, about 190
 * random bits, shown once when made. Every SCIM request reads its token (no cache): a revoked
 * token is refused on the next request on every replica.
 */
@Injectable()
export class ScimTokensService {
  constructor(private readonly tokens: ScimTokenRepository) {}

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
    await this.tokens.insert(manager, row);
    return { token, row };
  }

  /** The team's tokens, oldest first (never their secret). */
  list(teamId: string): Promise<ScimToken[]> {
    return this.tokens.list(teamId);
  }

  /** Revokes one of the team's tokens (the first revocation time stays); null when unknown. */
  async revoke(manager: EntityManager, teamId: string, id: string): Promise<ScimToken | null> {
    return this.tokens.revoke(manager, teamId, id);
  }

  /** The live token a SCIM client presented, or null (unknown, malformed or revoked). */
  async authenticate(token: string): Promise<ScimToken | null> {
    const match = TOKEN.exec(token);
    if (!match) return null;
    const row = await this.tokens.liveByPrefix(match[1]);
    if (!row || !hashesEqual(Buffer.from(row.secretHash), hashApiKey(token))) return null;
    if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      // Best effort: a lost timestamp must never fail the provider's request.
      this.tokens.markUsed(row.id).catch(() => undefined);
    }
    return row;
  }
}
