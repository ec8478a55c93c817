import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { Factory, LastSync } from './entities/factory.entity';

/** Factory rows: reads, the applier's lock, soft deletion and the repository sync's lease. */
@Injectable()
export class FactoryStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  findLive(teamId: string, id: string): Promise<Factory | null> {
    return this.dataSource.getRepository(Factory).findOneBy({ id, teamId, deletedAt: IsNull() });
  }

  /** A page of the team's live factories, newest first (one row more than `limit`: is there more?). */
  listPage(
    teamId: string,
    limit: number,
    after?: { createdAt: Date; id: string },
    search?: string,
  ): Promise<Factory[]> {
    const query = this.dataSource
      .getRepository(Factory)
      .createQueryBuilder('f')
      .where('f.team_id = :teamId AND f.deleted_at IS NULL', { teamId })
      .orderBy('f.created_at', 'DESC')
      .addOrderBy('f.id', 'DESC')
      .take(limit + 1);
    if (after) {
      query.andWhere('(f.created_at < :at OR (f.created_at = :at AND f.id < :id))', {
        at: after.createdAt,
        id: after.id,
      });
    }
    if (search)
      query.andWhere('f.name LIKE :search', { search: `%${search.replace(/[%_\\]/g, '\\$&')}%` });
    return query.getMany();
  }

  /** Every live repository-backed factory (the poller's round). */
  listRepositoryBacked(): Promise<Factory[]> {
    return this.dataSource
      .getRepository(Factory)
      .findBy({ source: 'repository', deletedAt: IsNull() });
  }

  /** Names of the team's live factories that fetch with the team secret `name`. */
  async namesUsingSecret(teamId: string, name: string, manager: EntityManager): Promise<string[]> {
    const rows = (await manager.query(
      `SELECT name FROM factories
        WHERE team_id = ? AND repository_credentials_secret = ? AND deleted_at IS NULL
        ORDER BY name`,
      [teamId, name],
    )) as { name: string }[];
    return rows.map((row) => row.name);
  }

  insert(manager: EntityManager, factory: Factory): Promise<unknown> {
    return manager.getRepository(Factory).insert(factory);
  }

  save(manager: EntityManager, factory: Factory): Promise<Factory> {
    return manager.getRepository(Factory).save(factory);
  }

  /** The live factory, locked until the transaction ends; throws when there is none. */
  lockLive(manager: EntityManager, id: string): Promise<Factory> {
    return manager
      .getRepository(Factory)
      .createQueryBuilder('f')
      .setLock('pessimistic_write')
      .where('f.id = :id AND f.deleted_at IS NULL', { id })
      .getOneOrFail();
  }

  async softDelete(manager: EntityManager, id: string): Promise<void> {
    await manager
      .getRepository(Factory)
      .update({ id }, { deletedAt: new Date(), updatedAt: new Date() });
  }

  /** Takes the sync lease of a live factory until `until`; false when another holds it. */
  async takeSyncLease(id: string, now: Date, until: Date): Promise<boolean> {
    const taken = await this.dataSource.query(
      `UPDATE factories SET sync_lock_until = ?
        WHERE id = ? AND deleted_at IS NULL AND (sync_lock_until IS NULL OR sync_lock_until < ?)`,
      [until, id, now],
    );
    return Boolean((taken as { affectedRows: number }).affectedRows);
  }

  /** Records the sync's outcome and releases its lease. */
  async finishSync(id: string, outcome: LastSync): Promise<void> {
    await this.dataSource.query(
      `UPDATE factories SET last_sync = ?, sync_lock_until = NULL WHERE id = ?`,
      [JSON.stringify(outcome), id],
    );
  }
}
