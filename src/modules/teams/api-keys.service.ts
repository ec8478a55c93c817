import { Inject, Injectable, Optional } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import {
  BroadcastCache,
  Invalidation,
  InvalidationBus,
  optionalBroadcastCache,
} from '../../common/cache/broadcast-cache';
import { Invalidations } from '../../common/cache/invalidations';
import { newUid } from '../../common/ids';
import { ApiKey } from './api-key.entity';
import { ApiKeyRepository } from './api-key.repository';
import { lowerRole, type TeamRole } from '../../common/auth/roles';
import { generateApiKey, hashApiKey, hashesEqual, lookupPrefixOf } from './api-key-format';
import { API_KEY_STRATEGY } from './auth/api-key.strategy';
import { Principal } from '../../common/auth/principal';
import type { User } from './user.entity';

const LAST_USED_RESOLUTION_MS = 60_000;
const VALIDITY_BATCH = 500;
const CACHED_KEYS = 10_000;
/** Invalidation topics: a key (by id) and a user (by id: role, name, deletion). */
export const API_KEY_TOPIC = 'api_key';
export const USER_TOPIC = 'user';
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
    private readonly keys: ApiKeyRepository,
    @Optional() @Inject(Invalidations) private readonly invalidations?: InvalidationBus,
  ) {
    this.authenticated = optionalBroadcastCache(invalidations, {
      maxEntries: CACHED_KEYS,
      affects: keyAffectedBy,
    });
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
    await this.keys.insert(
      {
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
      },
      options.manager,
    );
    return { key, id };
  }

  /** The team's keys of people (not agent identities', not run-scoped), oldest first. */
  listPeopleKeys(teamId: string): Promise<ApiKey[]> {
    return this.keys.listPeopleKeys(teamId);
  }

  /** One of the team's keys of people, or null. */
  findPeopleKey(teamId: string, id: string): Promise<ApiKey | null> {
    return this.keys.findPeopleKey(teamId, id);
  }

  /** Revokes one of the team's keys of people; null when the team has no such key. */
  async revokePeopleKey(
    teamId: string,
    id: string,
    manager?: EntityManager,
  ): Promise<ApiKey | null> {
    return (await this.findPeopleKey(teamId, id)) ? this.revoke(id, manager) : null;
  }

  async existsForKey(plainKey: string): Promise<boolean> {
    return (await this.keys.countByPrefix(lookupPrefixOf(plainKey))) > 0;
  }

  async countActive(): Promise<number> {
    return this.keys.countActive();
  }

  /** A team's keys (not the run-scoped ones), oldest first; the entity holds only the secret's hash. */
  listKeys(teamId: string): Promise<ApiKey[]> {
    return this.keys.listKeys(teamId);
  }

  /** Creates a key bound to one execution of one run, acting as `userId`; returns the plain key. */
  async createForRun(fields: {
    id: string;
    teamId: string;
    userId: string;
    runId: string;
    executionId: number;
    /** The worker credential of the self-hosted worker the key is handed to. */
    workerCredentialId?: string;
  }): Promise<string> {
    const { key, prefix } = generateApiKey();
    await this.keys.insert({
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
      workerCredentialId: fields.workerCredentialId ?? null,
    });
    return key;
  }

  /**
   * Revokes, in `manager`'s transaction, the live run-scoped keys handed out over a worker
   * credential (revoking the credential); every replica drops them once it commits.
   */
  async revokeIssuedOver(manager: EntityManager, workerCredentialId: string): Promise<number> {
    const ids = await this.keys.revokeIssuedOver(manager, workerCredentialId);
    await this.keysChanged(ids, manager);
    return ids.length;
  }

  /** Run-scoped keys not revoked yet, oldest first. */
  liveRunKeys(limit: number): Promise<ApiKey[]> {
    return this.keys.liveRunKeys(limit);
  }

  /**
   * Deletes run-scoped keys revoked before `revokedBefore`, up to `limit`: they can never
   * authenticate again (an unknown key is refused as a revoked one is), nothing reads a revoked
   * one, and the audit log names a run key's acts by its run. Answers how many.
   */
  deleteRevokedRunKeys(revokedBefore: Date, limit: number): Promise<number> {
    return this.keys.deleteRevokedRunKeys(revokedBefore, limit);
  }

  async revokeMany(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.keys.revokeMany(ids);
    await this.keysChanged(ids);
  }

  /** One user's keys (an agent identity's; not the run-scoped ones), oldest first. */
  listForUser(userId: string): Promise<ApiKey[]> {
    return this.keys.listForUser(userId);
  }

  /** Revokes one of a user's keys; null when the user has no such key. */
  async revokeForUser(userId: string, id: string, manager?: EntityManager): Promise<ApiKey | null> {
    const key = await this.keys.findForUser(userId, id, manager);
    return key ? this.revoke(id, manager) : null;
  }

  /**
   * Deletes every key of a user, run-scoped ones included, inside the caller's transaction
   * (deleting an agent identity).
   */
  async deleteAllForUser(manager: EntityManager, userId: string): Promise<number> {
    const deleted = await this.keys.deleteAllForUser(manager, userId);
    await this.userChanged(userId, manager);
    return deleted;
  }

  /** Revokes a key (idempotently: the first revocation time stays); null when it does not exist. */
  async revoke(id: string, manager?: EntityManager): Promise<ApiKey | null> {
    await this.keys.revoke(id, manager);
    await this.keysChanged([id], manager);
    return this.keys.byId(id, manager);
  }

  /**
   * Of `ids`, the keys that would still authenticate: not revoked, expired or deleted, their user
   * not deleted (the conditions of `authenticate`). One query per 500 ids.
   */
  async stillValid(ids: string[]): Promise<Set<string>> {
    const valid = new Set<string>();
    for (let i = 0; i < ids.length; i += VALIDITY_BATCH) {
      for (const id of await this.keys.liveIds(ids.slice(i, i + VALIDITY_BATCH))) valid.add(id);
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
      this.keys.markUsed(key.principal.keyId).catch(() => undefined);
    }
    return { ...key.principal };
  }

  private async lookup(plainKey: string, hash: Buffer): Promise<AuthenticatedKey | null> {
    const row = await this.keys.liveByPrefix(lookupPrefixOf(plainKey));
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
