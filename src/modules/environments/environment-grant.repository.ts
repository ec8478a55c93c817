import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { EnvironmentGrant } from './environment.entity';

/** `environment_grants`: environments offered to other teams, and the versions they accepted. */
@Injectable()
export class EnvironmentGrantRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Every grant made to the team, accepted or not. */
  listOfTeam(teamId: string): Promise<EnvironmentGrant[]> {
    return this.dataSource.getRepository(EnvironmentGrant).findBy({ teamId });
  }

  /** The team's grants of these environments. */
  findOfTeam(
    teamId: string,
    environmentIds: string[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<EnvironmentGrant[]> {
    return manager
      .getRepository(EnvironmentGrant)
      .findBy({ teamId, environmentId: In(environmentIds) });
  }

  find(manager: EntityManager, environmentId: string, teamId: string) {
    return manager.getRepository(EnvironmentGrant).findOneBy({ environmentId, teamId });
  }

  exists(manager: EntityManager, environmentId: string, teamId: string): Promise<boolean> {
    return manager.getRepository(EnvironmentGrant).existsBy({ environmentId, teamId });
  }

  /** Offers the environment to the team; a grant it already has stays as it is. */
  async offer(manager: EntityManager, environmentId: string, teamId: string): Promise<void> {
    await manager
      .createQueryBuilder()
      .insert()
      .into(EnvironmentGrant)
      .values({ environmentId, teamId, createdAt: new Date() })
      .orIgnore()
      .execute();
  }

  async save(manager: EntityManager, grant: EnvironmentGrant): Promise<void> {
    await manager.getRepository(EnvironmentGrant).save(grant);
  }

  /** Removes the team's grant; false when it had none. */
  async delete(manager: EntityManager, environmentId: string, teamId: string): Promise<boolean> {
    const result = await manager.getRepository(EnvironmentGrant).delete({ environmentId, teamId });
    return Boolean(result.affected);
  }

  /** Removes every grant of the environment. */
  async deleteAllOf(manager: EntityManager, environmentId: string): Promise<void> {
    await manager.getRepository(EnvironmentGrant).delete({ environmentId });
  }

  /** Sets the guest team's setup outcome on its grant (`failed` false only clears a failure). */
  async recordSetupOutcome(
    teamId: string,
    environmentId: string,
    failed: boolean,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    const match = failed ? {} : { setupFailed: true };
    await manager
      .getRepository(EnvironmentGrant)
      .update({ environmentId, teamId, ...match }, { setupFailed: failed });
  }
}
