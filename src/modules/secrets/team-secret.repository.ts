import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import { TeamSecret } from './team-secret.entity';
import { SqlRepository } from '../../database/sql-repository';

/** The `team_secrets` table's statements. `manager` joins a caller's transaction. */
@Injectable()
export class TeamSecretRepository extends SqlRepository {
  /** The team's secrets by name, without their ciphertext. */
  list(teamId: string): Promise<TeamSecret[]> {
    return this.dataSource.getRepository(TeamSecret).find({
      where: { teamId },
      order: { name: 'ASC' },
      select: {
        id: true,
        teamId: true,
        name: true,
        description: true,
        scope: true,
        purpose: true,
        createdBy: true,
        createdAt: true,
        updatedAt: true,
      },
    });
  }

  find(teamId: string, name: string, manager?: EntityManager): Promise<TeamSecret | null> {
    return this.db(manager).getRepository(TeamSecret).findOneBy({ teamId, name });
  }

  /** The name, scope and purpose of the team's secrets among `names`. */
  scopesOf(teamId: string, names: string[]): Promise<TeamSecret[]> {
    return this.dataSource.getRepository(TeamSecret).find({
      select: { name: true, scope: true, purpose: true },
      where: { teamId, name: In(names) },
    });
  }

  exists(manager: EntityManager, teamId: string, name: string): Promise<boolean> {
    return manager.getRepository(TeamSecret).existsBy({ teamId, name });
  }

  async insert(manager: EntityManager, secret: TeamSecret): Promise<void> {
    await manager.getRepository(TeamSecret).insert(secret);
  }

  async save(manager: EntityManager, secret: TeamSecret): Promise<void> {
    await manager.getRepository(TeamSecret).save(secret);
  }

  async delete(manager: EntityManager, id: string): Promise<void> {
    await manager.getRepository(TeamSecret).delete({ id });
  }

  /** The team's secret, locked until `manager`'s transaction ends; null when none. */
  locked(manager: EntityManager, teamId: string, name: string): Promise<TeamSecret | null> {
    return manager
      .getRepository(TeamSecret)
      .createQueryBuilder('s')
      .setLock('pessimistic_write')
      .where('s.team_id = :teamId AND s.name = :name', { teamId, name })
      .getOne();
  }
}
