import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { NotificationDelivery } from './entities/notification-delivery.entity';

/** `notification_deliveries`: new deliveries of the emitter, the sweeper's overdue and old ones. */
@Injectable()
export class NotificationDeliveryRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Records a delivery in `manager`'s transaction; its id. */
  async insert(manager: EntityManager, row: Omit<NotificationDelivery, 'id'>): Promise<string> {
    const { identifiers } = await manager.getRepository(NotificationDelivery).insert(row);
    return String(identifiers[0].id);
  }

  /** Pending deliveries whose attempt was due before `overdue`, earliest first. */
  async overdue(overdue: Date, limit: number): Promise<{ id: string; nextAttemptAt: Date }[]> {
    const rows = (await this.dataSource.query(
      `SELECT id, next_attempt_at FROM notification_deliveries
        WHERE next_attempt_at < ? AND status = 'pending' ORDER BY next_attempt_at LIMIT ${Number(limit)}`,
      [overdue],
    )) as { id: string; next_attempt_at: Date }[];
    return rows.map((row) => ({ id: String(row.id), nextAttemptAt: row.next_attempt_at }));
  }

  /** Deletes up to `limit` finished deliveries created before `cutoff`; how many. */
  async deleteFinishedBefore(cutoff: Date, limit: number): Promise<number> {
    const result = (await this.dataSource.query(
      `DELETE FROM notification_deliveries
        WHERE created_at < ? AND next_attempt_at IS NULL AND status <> 'pending'
        LIMIT ${Number(limit)}`,
      [cutoff],
    )) as { affectedRows: number };
    return result.affectedRows;
  }
}
