import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { TeamNetworkPolicy } from './team-network-policy.entity';

/** `team_network_policies`: a team's row, absent until its policy is first changed. */
@Injectable()
export class TeamNetworkPolicyRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  find(teamId: string, manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(TeamNetworkPolicy).findOneBy({ teamId });
  }

  /** The team's row, made if missing and locked until `manager`'s transaction ends. */
  async lockCreating(manager: EntityManager, teamId: string): Promise<TeamNetworkPolicy | null> {
    await manager.query(
      `INSERT INTO team_network_policies (team_id, updated_at) VALUES (?, ?)
         ON DUPLICATE KEY UPDATE updated_at = updated_at`,
      [teamId, new Date()],
    );
    return manager
      .getRepository(TeamNetworkPolicy)
      .createQueryBuilder('p')
      .setLock('pessimistic_write')
      .where('p.team_id = :teamId', { teamId })
      .getOne();
  }

  async setEgressOpenAllowed(
    manager: EntityManager,
    teamId: string,
    egressOpenAllowed: boolean,
  ): Promise<void> {
    await manager
      .getRepository(TeamNetworkPolicy)
      .update({ teamId }, { egressOpenAllowed, updatedAt: new Date() });
  }
}
