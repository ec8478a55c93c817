import { Injectable } from '@nestjs/common';
import { EntityManager, In, IsNull } from 'typeorm';
import type { TeamRole } from '../../common/auth/roles';
import { ApiKey } from './api-key.entity';
import { User } from './user.entity';
import { SqlRepository } from '../../database/sql-repository';

/**
 * A key that authenticates (`k` the key, `u` its user; the one parameter: now). A person's key
 * stays in the team it was made in: once its person is moved to another team it no longer
 * authenticates (a run-scoped key keeps reporting for the run it was issued to).
 */
const LIVE_KEY = `k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?)
  AND u.deleted_at IS NULL AND (k.team_id = u.team_id OR k.run_id IS NOT NULL)`;

/** A live key with its user, as authentication reads it. */
export interface LiveKeyRow {
  id: string;
  name: string;
  team_id: string;
  user_id: string;
  secret_hash: Buffer;
  last_used_at: Date | null;
  expires_at: Date | null;
  type: User['type'];
  key_role: TeamRole | null;
  user_role: TeamRole;
  display_name: string;
  email: string | null;
  run_id: string | null;
  run_execution_id: number | null;
}

/** The `api_keys` table's statements. `manager` joins a caller's transaction. */
@Injectable()
export class ApiKeyRepository extends SqlRepository {
  async insert(key: Partial<ApiKey>, manager?: EntityManager): Promise<void> {
    await this.db(manager).getRepository(ApiKey).insert(key);
  }

  /** The team's keys of people (not agent identities', not run-scoped), oldest first. */
  listPeopleKeys(teamId: string): Promise<ApiKey[]> {
    return this.peopleKeys(teamId)
      .orderBy('k.created_at', 'ASC')
      .addOrderBy('k.id', 'ASC')
      .getMany();
  }

  /** One of the team's keys of people, or null. */
  findPeopleKey(teamId: string, id: string): Promise<ApiKey | null> {
    return this.peopleKeys(teamId).andWhere('k.id = :id', { id }).getOne();
  }

  private peopleKeys(teamId: string) {
    return this.dataSource
      .getRepository(ApiKey)
      .createQueryBuilder('k')
      .innerJoin(User, 'u', 'u.id = k.user_id')
      .where("k.team_id = :teamId AND k.run_id IS NULL AND u.type = 'user'", { teamId });
  }

  countByPrefix(prefix: string): Promise<number> {
    return this.dataSource.getRepository(ApiKey).countBy({ prefix });
  }

  /** Keys not revoked, run-scoped ones aside. */
  countActive(): Promise<number> {
    return this.dataSource
      .getRepository(ApiKey)
      .createQueryBuilder('k')
      .where('k.revoked_at IS NULL AND k.run_id IS NULL')
      .getCount();
  }

  /** A team's keys (not the run-scoped ones), oldest first. */
  listKeys(teamId: string): Promise<ApiKey[]> {
    return this.dataSource
      .getRepository(ApiKey)
      .find({ where: { teamId, runId: IsNull() }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** Run-scoped keys not revoked yet, oldest first. */
  liveRunKeys(limit: number): Promise<ApiKey[]> {
    return this.dataSource
      .getRepository(ApiKey)
      .createQueryBuilder('k')
      .select(['k.id', 'k.runId', 'k.runExecutionId', 'k.createdAt'])
      .where('k.revoked_at IS NULL AND k.run_id IS NOT NULL')
      .orderBy('k.created_at', 'ASC')
      .limit(limit)
      .getMany();
  }

  /**
   * Deletes up to `limit` run-scoped keys revoked before `revokedBefore`, the longest revoked
   * first (through `idx_api_keys_live_run`; `id` makes the order total, as a replicated
   * DELETE … LIMIT needs); answers how many.
   */
  async deleteRevokedRunKeys(revokedBefore: Date, limit: number): Promise<number> {
    const result = (await this.dataSource.query(
      `DELETE FROM api_keys WHERE revoked_at < ? AND run_id IS NOT NULL
        ORDER BY revoked_at, id LIMIT ?`,
      [revokedBefore, limit],
    )) as { affectedRows: number };
    return result.affectedRows;
  }

  /** Revokes these keys (those not revoked yet). */
  async revokeMany(ids: string[], manager?: EntityManager): Promise<void> {
    await this.db(manager)
      .getRepository(ApiKey)
      .update({ id: In(ids), revokedAt: IsNull() }, { revokedAt: new Date() });
  }

  /** One user's keys (not the run-scoped ones), oldest first. */
  listForUser(userId: string): Promise<ApiKey[]> {
    return this.dataSource
      .getRepository(ApiKey)
      .find({ where: { userId, runId: IsNull() }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** One of a user's keys (not a run-scoped one), or null. */
  findForUser(userId: string, id: string, manager?: EntityManager): Promise<ApiKey | null> {
    return this.db(manager).getRepository(ApiKey).findOneBy({ id, userId, runId: IsNull() });
  }

  byId(id: string, manager?: EntityManager): Promise<ApiKey | null> {
    return this.db(manager).getRepository(ApiKey).findOneBy({ id });
  }

  /** Deletes every key of a user, run-scoped ones included; answers how many. */
  async deleteAllForUser(manager: EntityManager, userId: string): Promise<number> {
    const result = await manager.getRepository(ApiKey).delete({ userId });
    return result.affected ?? 0;
  }

  /** Revokes a key (the first revocation time stays). */
  async revoke(id: string, manager?: EntityManager): Promise<void> {
    await this.db(manager)
      .getRepository(ApiKey)
      .update({ id, revokedAt: IsNull() }, { revokedAt: new Date() });
  }

  /** Revokes the live keys handed out over a worker credential (locking them); their ids. */
  async revokeIssuedOver(manager: EntityManager, workerCredentialId: string): Promise<string[]> {
    const rows = (await manager.query(
      `SELECT id FROM api_keys WHERE worker_credential_id = ? AND revoked_at IS NULL FOR UPDATE`,
      [workerCredentialId],
    )) as { id: string }[];
    const ids = rows.map((row) => row.id);
    if (ids.length) await this.revokeMany(ids, manager);
    return ids;
  }

  /** Revokes a person's live keys, run-scoped ones aside; answers how many. */
  async revokePersonKeys(manager: EntityManager, userId: string): Promise<number> {
    const revoked = await manager
      .getRepository(ApiKey)
      .update({ userId, runId: IsNull(), revokedAt: IsNull() }, { revokedAt: new Date() });
    return revoked.affected ?? 0;
  }

  /** Of `ids`, the keys that would still authenticate (LIVE_KEY): one query. */
  async liveIds(ids: string[]): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT k.id FROM api_keys k JOIN users u ON u.id = k.user_id
          WHERE k.id IN (?) AND ${LIVE_KEY}`,
      [ids, new Date()],
    )) as { id: string }[];
    return rows.map((row) => row.id);
  }

  async markUsed(id: string): Promise<void> {
    await this.dataSource.query(`UPDATE api_keys SET last_used_at = ? WHERE id = ?`, [
      new Date(),
      id,
    ]);
  }

  /** The live key with this lookup prefix, with its user, or undefined. */
  async liveByPrefix(prefix: string): Promise<LiveKeyRow | undefined> {
    const rows = (await this.dataSource.query(
      `SELECT k.id, k.name, k.team_id, k.user_id, k.secret_hash, k.last_used_at, k.expires_at,
              k.run_id, k.run_execution_id, u.type, k.role AS key_role, u.role AS user_role,
              u.display_name, u.email
         FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.prefix = ? AND ${LIVE_KEY}`,
      [prefix, new Date()],
    )) as LiveKeyRow[];
    return rows[0];
  }
}
