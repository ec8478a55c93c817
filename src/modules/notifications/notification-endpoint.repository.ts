import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { NotificationEndpoint } from './entities/notification-endpoint.entity';

/** `notification_endpoints`: the admin API's rows, the emitter's and the deliverer's reads. */
@Injectable()
export class NotificationEndpointRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The team's enabled endpoints and the events each listens to, in `manager`'s transaction when
   * given (TeamEndpoints caches them).
   */
  async enabledOfTeam(
    teamId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<{ id: string; events: string[] }[]> {
    const rows = (await manager.query(
      `SELECT id, events FROM notification_endpoints WHERE team_id = ? AND enabled = 1`,
      [teamId],
    )) as { id: string; events: string }[];
    return rows.map((row) => ({ id: row.id, events: row.events.split(',') }));
  }

  listOfTeam(teamId: string): Promise<NotificationEndpoint[]> {
    return this.dataSource
      .getRepository(NotificationEndpoint)
      .find({ where: { teamId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  findOfTeam(teamId: string, id: string): Promise<NotificationEndpoint | null> {
    return this.dataSource.getRepository(NotificationEndpoint).findOneBy({ id, teamId });
  }

  find(id: string): Promise<NotificationEndpoint | null> {
    return this.dataSource.getRepository(NotificationEndpoint).findOneBy({ id });
  }

  /** How many endpoints the team has, its rows locked until `manager`'s transaction ends. */
  async countOfTeamLocked(manager: EntityManager, teamId: string): Promise<number> {
    const [{ count }] = (await manager.query(
      `SELECT COUNT(*) AS count FROM notification_endpoints WHERE team_id = ? FOR UPDATE`,
      [teamId],
    )) as { count: number | string }[];
    return Number(count);
  }

  async insert(manager: EntityManager, endpoint: NotificationEndpoint): Promise<void> {
    await manager.getRepository(NotificationEndpoint).insert(endpoint);
  }

  async update(
    manager: EntityManager,
    id: string,
    changes: Partial<NotificationEndpoint>,
  ): Promise<void> {
    await manager.getRepository(NotificationEndpoint).update({ id }, changes);
  }

  /** Deletes the endpoint (its deliveries go with it). */
  async delete(manager: EntityManager, id: string): Promise<void> {
    await manager.getRepository(NotificationEndpoint).delete({ id });
  }
}
