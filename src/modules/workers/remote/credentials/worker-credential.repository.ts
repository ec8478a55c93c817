import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, IsNull } from 'typeorm';
import { WorkerCredential } from './worker-credential.entity';

/** The `worker_credentials` table's statements. `manager` joins a caller's transaction. */
@Injectable()
export class WorkerCredentialRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, record: WorkerCredential): Promise<void> {
    await manager.getRepository(WorkerCredential).insert(record);
  }

  /** The team's credentials, oldest first. */
  list(teamId: string): Promise<WorkerCredential[]> {
    return this.dataSource
      .getRepository(WorkerCredential)
      .find({ where: { teamId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** Revokes one (the first revocation time stays); null when the team has none. */
  async revoke(
    manager: EntityManager,
    teamId: string,
    id: string,
  ): Promise<WorkerCredential | null> {
    const repo = manager.getRepository(WorkerCredential);
    await repo.update({ id, teamId, revokedAt: IsNull() }, { revokedAt: new Date() });
    return repo.findOneBy({ id, teamId });
  }

  /** The live (not revoked) credential with this lookup prefix, or null. */
  liveByPrefix(prefix: string): Promise<WorkerCredential | null> {
    return this.dataSource
      .getRepository(WorkerCredential)
      .findOneBy({ prefix, revokedAt: IsNull() });
  }

  async markUsed(id: string): Promise<void> {
    await this.dataSource
      .getRepository(WorkerCredential)
      .update({ id }, { lastUsedAt: new Date() });
  }

  /** Of `ids` (not empty), the credentials not revoked. */
  async liveIds(ids: string[]): Promise<string[]> {
    const live = await this.dataSource
      .getRepository(WorkerCredential)
      .find({ select: { id: true }, where: { id: In(ids), revokedAt: IsNull() } });
    return live.map((c) => c.id);
  }
}
