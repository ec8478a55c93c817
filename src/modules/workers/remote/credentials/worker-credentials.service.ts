import { Inject, Injectable, Optional } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { InvalidationBus } from '../../../../common/cache/broadcast-cache';
import { Invalidations } from '../../../../common/cache/invalidations';
import { ApiKeysService } from '../../../teams';
import { newUid } from '../../../../common/ids';
import type { Principal } from '../../../../common/auth/principal';
import {
  credentialPrefixOf,
  generateWorkerCredential,
  hashCredential,
  hashesEqual,
} from './worker-credential-format';
import { WorkerCredential } from './worker-credential.entity';
import { WorkerCredentialRepository } from './worker-credential.repository';

/** What a revocation announces to every replica (`Invalidations`): the credential's id. */
export const WORKER_CREDENTIAL_TOPIC = 'worker_credential';

/** Worker credentials of a team: created by admins, shown once, stored hashed, revocable. */
@Injectable()
export class WorkerCredentialsService {
  constructor(
    private readonly credentials: WorkerCredentialRepository,
    private readonly apiKeys: ApiKeysService,
    @Optional() @Inject(Invalidations) private readonly invalidations?: InvalidationBus,
  ) {}

  /** A new credential; the plain value is returned here only and never stored. */
  async create(
    principal: Principal,
    fields: { name: string; workerId: string },
    manager: EntityManager,
  ): Promise<{ credential: string; record: WorkerCredential }> {
    const { credential, prefix } = generateWorkerCredential();
    const record: WorkerCredential = {
      id: newUid(),
      teamId: principal.teamId,
      name: fields.name,
      workerId: fields.workerId,
      prefix,
      secretHash: hashCredential(credential),
      createdBy: principal.userId,
      createdAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
    };
    await this.credentials.insert(manager, record);
    return { credential, record };
  }

  /** The team's credentials, oldest first (the entity holds only the secret's hash). */
  list(teamId: string): Promise<WorkerCredential[]> {
    return this.credentials.list(teamId);
  }

  /**
   * Revokes one (idempotently: the first revocation time stays); null when the team has none.
   * The run-scoped keys handed out over it are revoked in the same transaction, so the worker's
   * executions stop reporting whether or not it is still connected. Every replica hears of it
   * once `manager`'s transaction commits, and closes the connections made with it at once
   * (WorkerGateway), not at its next periodic look.
   */
  async revoke(
    teamId: string,
    id: string,
    manager: EntityManager,
  ): Promise<WorkerCredential | null> {
    const record = await this.credentials.revoke(manager, teamId, id);
    if (!record) return null;
    await this.apiKeys.revokeIssuedOver(manager, id);
    await this.invalidations?.changed(manager, WORKER_CREDENTIAL_TOPIC, [id]);
    return record;
  }

  /** The live credential a worker presented, or null (unknown, malformed or revoked). */
  async authenticate(token: string): Promise<WorkerCredential | null> {
    const prefix = credentialPrefixOf(token);
    if (!prefix) return null;
    const record = await this.credentials.liveByPrefix(prefix);
    if (!record || !hashesEqual(Buffer.from(record.secretHash), hashCredential(token))) {
      return null;
    }
    // Best effort: a lost timestamp must never refuse a worker.
    await this.credentials.markUsed(record.id).catch(() => undefined);
    return record;
  }

  /** Of `ids`, the credentials not revoked. */
  async stillValid(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    return new Set(await this.credentials.liveIds(ids));
  }
}
