import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';

/** The `notification_endpoints` reads of the emitter. */
@Injectable()
export class NotificationEndpointRepository {
  /** The team's enabled endpoints and the events each listens to, in `manager`'s transaction. */
  async enabledOfTeam(
    manager: EntityManager,
    teamId: string,
  ): Promise<{ id: string; events: string[] }[]> {
    const rows = (await manager.query(
      `SELECT id, events FROM notification_endpoints WHERE team_id = ? AND enabled = 1`,
      [teamId],
    )) as { id: string; events: string }[];
    return rows.map((row) => ({ id: row.id, events: row.events.split(',') }));
  }
}
