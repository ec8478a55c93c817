import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { Environment } from './environment.entity';

/** What an update of an environment's settings changes (its version is counted in the row). */
type EnvironmentChanges = Partial<
  Pick<Environment, 'name' | 'config' | 'lastEditorId' | 'updatedAt'>
>;

/**
 * `environments`: the module's rows, and the reads other modules make (the workers: an
 * execution's secrets, snapshots). `manager` joins a caller's transaction.
 */
@Injectable()
export class EnvironmentRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The environment's team and config (of any team: the caller checks), or null. */
  configOf(id: string): Promise<Pick<Environment, 'id' | 'teamId' | 'config'> | null> {
    return this.dataSource.getRepository(Environment).findOne({
      select: { id: true, teamId: true, config: true },
      where: { id },
    });
  }

  /** When each of these environments (those that exist) was last updated. */
  updatedAtOf(ids: string[]): Promise<Pick<Environment, 'id' | 'updatedAt'>[]> {
    return this.dataSource
      .getRepository(Environment)
      .find({ select: { id: true, updatedAt: true }, where: { id: In(ids) } });
  }

  /** These environments (those that exist), of any team. */
  findByIds(ids: string[], manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(Environment).findBy({ id: In(ids) });
  }

  listOwnedBy(teamId: string): Promise<Environment[]> {
    return this.dataSource.getRepository(Environment).findBy({ teamId });
  }

  findByShareToken(shareToken: string): Promise<Environment | null> {
    return this.dataSource.getRepository(Environment).findOneBy({ shareToken });
  }

  /** Names of the team's environments whose config lists the team secret `name`. */
  async namesUsingSecret(teamId: string, name: string, manager: EntityManager): Promise<string[]> {
    const rows = (await manager.query(
      `SELECT name FROM environments
        WHERE team_id = ? AND JSON_CONTAINS(JSON_EXTRACT(config, '$.secrets'), JSON_OBJECT('name', ?))
        ORDER BY name`,
      [teamId, name],
    )) as { name: string }[];
    return rows.map((r) => r.name);
  }

  /** The environment, locked until `manager`'s transaction ends (a guest accepting a version). */
  findLocked(manager: EntityManager, id: string): Promise<Environment | null> {
    return manager
      .getRepository(Environment)
      .findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  /** The environment, locked until `manager`'s transaction ends (an egress rule being added). */
  lockForEgressChange(manager: EntityManager, id: string): Promise<Environment | null> {
    return manager
      .getRepository(Environment)
      .createQueryBuilder('e')
      .setLock('pessimistic_write')
      .where('e.id = :uid', { uid: id })
      .getOne();
  }

  async insert(manager: EntityManager, environment: Environment): Promise<void> {
    await manager.getRepository(Environment).insert(environment);
  }

  /**
   * Applies an owner's changes as a new version: counted in the row, so two concurrent changes
   * are two versions.
   */
  async updateAsNewVersion(
    manager: EntityManager,
    id: string,
    changes: EnvironmentChanges,
  ): Promise<void> {
    await manager
      .createQueryBuilder()
      .update(Environment)
      .set({ ...changes, version: () => 'version + 1' })
      .where({ id })
      .execute();
  }

  /** The version the environment is at (it exists). */
  async versionOf(manager: EntityManager, id: string): Promise<number> {
    const row = await manager
      .getRepository(Environment)
      .findOne({ select: { id: true, version: true }, where: { id } });
    return row!.version;
  }

  /** Applies the config change of an added egress rule as a new version. */
  async updateEgressAsNewVersion(
    manager: EntityManager,
    id: string,
    changes: EnvironmentChanges,
  ): Promise<void> {
    await manager
      .getRepository(Environment)
      .createQueryBuilder()
      .update()
      .set({ ...changes, version: () => 'version + 1' })
      .where('id = :uid', { uid: id })
      .execute();
  }

  async setShareToken(manager: EntityManager, id: string, shareToken: string): Promise<void> {
    await manager.getRepository(Environment).update({ id }, { shareToken });
  }

  async delete(manager: EntityManager, id: string): Promise<void> {
    await manager.getRepository(Environment).delete({ id });
  }

  /** Sets the owning team's setup outcome on the environment (`failed` false only clears one). */
  async recordSetupOutcome(
    teamId: string,
    environmentId: string,
    failed: boolean,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    const match = failed ? {} : { setupFailed: true };
    await manager
      .getRepository(Environment)
      .update({ id: environmentId, teamId, ...match }, { setupFailed: failed });
  }

  /** Of `ids` (not empty), those naming one of the team's environments (a secret's scope). */
  async idsOfTeam(manager: EntityManager, teamId: string, ids: string[]): Promise<Set<string>> {
    const found = (await manager.query(
      `SELECT id FROM environments WHERE team_id = ? AND id IN (?)`,
      [teamId, ids],
    )) as { id: string }[];
    return new Set(found.map((row) => row.id));
  }
}
