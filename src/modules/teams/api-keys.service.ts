import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, IsNull } from 'typeorm';
import { BroadcastCache, Invalidation, InvalidationBus } from '../../common/cache/broadcast-cache';
import { Invalidations } from '../../common/cache/invalidations';
import { newUid } from '../../common/ids';
import { ApiKey } from './api-key.entity';
import { lowerRole, type TeamRole } from '../../common/auth/roles';
import { generateApiKey, hashApiKey, hashesEqual, lookupPrefixOf } from './api-key-format';
import { API_KEY_STRATEGY } from './auth/api-key.strategy';
import { Principal } from '../../common/auth/principal';
import { User } from './user.entity';

const LAST_USED_RESOLUTION_MS = 60_000;
const VALIDITY_BATCH = 500;
const CACHED_KEYS = 10_000;
/** Invalidation topics: a key (by id) and a user (by id: role, name, deletion). */
export const API_KEY_TOPIC = 'api_key';
export const USER_TOPIC = 'user';
/**
 * A key that authenticates (`k` the key, `u` its user; the one parameter: now). A person's key
 * stays in the team it was made in: once its person is moved to another team it no longer
 * authenticates (a run-scoped key keeps reporting for the run it was issued to).
 */
const LIVE_KEY = `k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?)
  AND u.deleted_at IS NULL AND (k.team_id = u.team_id OR k.run_id IS NOT NULL)`;

interface KeyRow {
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

/** A key that authenticated, as cached by its secret's hash. */
interface AuthenticatedKey {
  principal: Principal;
  expiresAt: number | null;
  lastUsedAt: number | null;
}

function keyAffectedBy({ principal }: AuthenticatedKey, change: Invalidation): boolean {
  return change.topic === API_KEY_TOPIC
    ? principal.keyId === change.id
    : change.topic === USER_TOPIC && principal.userId === change.id;
}

@Injectable()
export class ApiKeysService {
  /**
   * Authenticated keys by secret hash, so a request costs no query. Revoking or deleting a key and
   * changing or deleting its user announce it (`Invalidations`), which drops the entry on every
   * replica before the change's request is answered; without a broadcaster (the CLI) nothing is
   * cached.
   */
  private readonly authenticated: BroadcastCache<AuthenticatedKey> | null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Optional() @Inject(Invalidations) private readonly invalidations?: InvalidationBus,
  ) {
    this.authenticated = invalidations
      ? new BroadcastCache(invalidations, {
          ttlMs: invalidations.cacheTtlMs,
          maxEntries: CACHED_KEYS,
          affects: keyAffectedBy,
        })
      : null;
  }

  /** Announces (after `manager`'s commit) that these keys changed: no replica serves them cached. */
  keysChanged(ids: readonly string[], manager?: EntityManager): Promise<void> {
    return this.invalidations?.changed(manager, API_KEY_TOPIC, ids) ?? Promise.resolve();
  }

  /** Announces (after `manager`'s commit) that a user changed: role, name, deletion, its keys. */
  userChanged(userId: string, manager?: EntityManager): Promise<void> {
    return this.invalidations?.changed(manager, USER_TOPIC, [userId]) ?? Promise.resolve();
  }

  /**
   * Creates a key for a user and returns the plain key: it is shown once and never stored.
   * Without a role the key acts with its user's; `plainKey` is an operator-chosen key (bootstrap).
   */
  async create(
    user: Pick<User, 'id' | 'teamId'>,
    name: string,
    options: {
      role?: TeamRole;
      expiresAt?: Date | null;
      plainKey?: string;
      /** The caller's transaction (the key commits with its audit event). */
      manager?: EntityManager;
    } = {},
  ): Promise<{ key: string; id: string }> {
    const key = options.plainKey ?? generateApiKey().key;
    const id = newUid();
    await (options.manager ?? this.dataSource.manager).getRepository(ApiKey).insert({
      id,
      teamId: user.teamId,
      userId: user.id,
      name,
      prefix: lookupPrefixOf(key),
      secretHash: hashApiKey(key),
      createdAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
      role: options.role ?? null,
      expiresAt: options.expiresAt ?? null,
    });
    return { key, id };
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

  /** Revokes one of the team's keys of people; null when the team has no such key. */
  async revokePeopleKey(
    teamId: string,
    id: string,
    manager = this.dataSource.manager,
  ): Promise<ApiKey | null> {
    return (await this.findPeopleKey(teamId, id)) ? this.revoke(id, manager) : null;
  }

  private peopleKeys(teamId: string) {
    return this.dataSource
      .getRepository(ApiKey)
      .createQueryBuilder('k')
      .innerJoin(User, 'u', 'u.id = k.user_id')
      .where("k.team_id = :teamId AND k.run_id IS NULL AND u.type = 'user'", { teamId });
  }

  async existsForKey(plainKey: string): Promise<boolean> {
    return (
      (await this.dataSource.getRepository(ApiKey).countBy({ prefix: lookupPrefixOf(plainKey) })) >
      0
    );
  }

  async countActive(): Promise<number> {
    return this.dataSource
      .getRepository(ApiKey)
      .createQueryBuilder('k')
      .where('k.revoked_at IS NULL AND k.run_id IS NULL')
      .getCount();
  }

  /** A team's keys (not the run-scoped ones), oldest first; the entity holds only the secret's hash. */
  listKeys(teamId: string): Promise<ApiKey[]> {
    return this.dataSource
      .getRepository(ApiKey)
      .find({ where: { teamId, runId: IsNull() }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** Creates a key bound to one execution of one run, acting as `userId`; returns the plain key. */
  async createForRun(fields: {
    id: string;
    teamId: string;
    userId: string;
    runId: string;
    executionId: number;
  }): Promise<string> {
    const { key, prefix } = generateApiKey();
    await this.dataSource.getRepository(ApiKey).insert({
      id: fields.id,
      teamId: fields.teamId,
      userId: fields.userId,
      name: `run ${fields.runId} execution ${fields.executionId}`,
      prefix,
      secretHash: hashApiKey(key),
      createdAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
      runId: fields.runId,
      runExecutionId: fields.executionId,
    });
    return key;
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

  async revokeMany(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.dataSource
      .getRepository(ApiKey)
      .update({ id: In(ids), revokedAt: IsNull() }, { revokedAt: new Date() });
    await this.keysChanged(ids);
  }

  /** One user's keys (an agent identity's; not the run-scoped ones), oldest first. */
  listForUser(userId: string): Promise<ApiKey[]> {
    return this.dataSource
      .getRepository(ApiKey)
      .find({ where: { userId, runId: IsNull() }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** Revokes one of a user's keys; null when the user has no such key. */
  async revokeForUser(
    userId: string,
    id: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<ApiKey | null> {
    const key = await manager.getRepository(ApiKey).findOneBy({ id, userId, runId: IsNull() });
    return key ? this.revoke(id, manager) : null;
  }

  /**
   * Deletes every key of a user, run-scoped ones included, inside the caller's transaction
   * (deleting an agent identity).
   */
  async deleteAllForUser(manager: EntityManager, userId: string): Promise<number> {
    const result = await manager.getRepository(ApiKey).delete({ userId });
    await this.userChanged(userId, manager);
    return result.affected ?? 0;
  }

  /** Revokes a key (idempotently: the first revocation time stays); null when it does not exist. */
  async revoke(id: string, manager = this.dataSource.manager): Promise<ApiKey | null> {
    const keys = manager.getRepository(ApiKey);
    await keys.update({ id, revokedAt: IsNull() }, { revokedAt: new Date() });
    await this.keysChanged([id], manager);
    return keys.findOneBy({ id });
  }

  /**
   * Of `ids`, the keys that would still authenticate: not revoked, expired or deleted, their user
   * not deleted (the conditions of `authenticate`). One query per 500 ids.
   */
  async stillValid(ids: string[]): Promise<Set<string>> {
    const valid = new Set<string>();
    for (let i = 0; i < ids.length; i += VALIDITY_BATCH) {
      const rows = (await this.dataSource.query(
        `SELECT k.id FROM api_keys k JOIN users u ON u.id = k.user_id
          WHERE k.id IN (?) AND ${LIVE_KEY}`,
        [ids.slice(i, i + VALIDITY_BATCH), new Date()],
      )) as { id: string }[];
      for (const row of rows) valid.add(row.id);
    }
    return valid;
  }

  /** Resolves a presented key to its principal, or null when it is unknown, revoked or expired. */
  async authenticate(plainKey: string): Promise<Principal | null> {
    if (!plainKey || plainKey.length > 512) return null;
    const hash = hashApiKey(plainKey);
    const load = () => this.lookup(plainKey, hash);
    const key = this.authenticated
      ? await this.authenticated.get(hash.toString('base64'), load, (k) => k.expiresAt)
      : await load();
    if (!key) return null;
    if (key.expiresAt !== null && key.expiresAt <= Date.now()) return null;
    if (key.lastUsedAt === null || Date.now() - key.lastUsedAt > LAST_USED_RESOLUTION_MS) {
      key.lastUsedAt = Date.now();
      // Best effort and throttled: a lost timestamp update must never fail the request.
      this.dataSource
        .query(`UPDATE api_keys SET last_used_at = ? WHERE id = ?`, [
          new Date(),
          key.principal.keyId,
        ])
        .catch(() => undefined);
    }
    return { ...key.principal };
  }

  private async lookup(plainKey: string, hash: Buffer): Promise<AuthenticatedKey | null> {
    const rows = (await this.dataSource.query(
      `SELECT k.id, k.name, k.team_id, k.user_id, k.secret_hash, k.last_used_at, k.expires_at,
              k.run_id, k.run_execution_id, u.type, k.role AS key_role, u.role AS user_role,
              u.display_name, u.email
         FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.prefix = ? AND ${LIVE_KEY}`,
      [lookupPrefixOf(plainKey), new Date()],
    )) as KeyRow[];
    const row = rows[0];
    if (!row || !hashesEqual(Buffer.from(row.secret_hash), hash)) return null;
    return {
      principal: {
        teamId: row.team_id,
        userId: row.user_id,
        keyId: row.id,
        keyName: row.name,
        userType: row.type,
        // Never more than its person may do now: a demoted person's admin key acts as they do.
        role: row.key_role ? lowerRole(row.key_role, row.user_role) : row.user_role,
        displayName: row.display_name,
        email: row.email,
        strategy: API_KEY_STRATEGY,
        ...(row.run_id ? { runId: row.run_id, runExecutionId: row.run_execution_id } : {}),
      },
      expiresAt: row.expires_at ? row.expires_at.getTime() : null,
      lastUsedAt: row.last_used_at ? row.last_used_at.getTime() : null,
    };
  }
}
