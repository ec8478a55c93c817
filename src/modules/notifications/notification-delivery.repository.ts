import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { NotificationDelivery } from './entities/notification-delivery.entity';

/** `notification_deliveries`: new deliveries of the emitter, the sweeper's overdue and old ones. */
@Injectable()
export class NotificationDeliveryRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Records a due delivery in `manager`'s transaction if its endpoint still exists, is enabled
   * and listens to its event (what TeamEndpoints offered may be a change behind); its id, or null
   * when nothing was recorded. The endpoint row is read with a shared lock, as the foreign key's
   * check would: a concurrent delete or change waits for this transaction, or this one for it.
   */
  async insertIfListening(
    manager: EntityManager,
    row: Omit<NotificationDelivery, 'id' | 'responseCode' | 'lastError' | 'lastAttemptAt'>,
  ): Promise<string | null> {
    const result = (await manager.query(
      `INSERT INTO notification_deliveries (endpoint_id, message_id, event, payload, status,
         attempts, response_code, last_error, next_attempt_at, created_at, last_attempt_at)
       SELECT id, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, NULL FROM notification_endpoints
        WHERE id = ? AND enabled = 1 AND FIND_IN_SET(?, events) > 0`,
      [
        row.messageId,
        row.event,
        row.payload,
        row.status,
        row.attempts,
        row.nextAttemptAt,
        row.createdAt,
        row.endpointId,
        row.event,
      ],
    )) as { affectedRows: number; insertId: number | string };
    return result.affectedRows > 0 ? String(result.insertId) : null;
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

  find(id: string): Promise<NotificationDelivery | null> {
    return this.dataSource.getRepository(NotificationDelivery).findOneBy({ id });
  }

  findOfEndpoint(endpointId: string, id: string): Promise<NotificationDelivery | null> {
    return this.dataSource.getRepository(NotificationDelivery).findOneBy({ id, endpointId });
  }

  /** A page of the endpoint's deliveries, newest first; `before` is the previous page's last id. */
  pageOfEndpoint(
    endpointId: string,
    limit: number,
    before?: string,
  ): Promise<NotificationDelivery[]> {
    const query = this.dataSource
      .getRepository(NotificationDelivery)
      .createQueryBuilder('d')
      .where('d.endpoint_id = :endpointId', { endpointId })
      .orderBy('d.id', 'DESC')
      .limit(limit);
    if (before) query.andWhere('d.id < :before', { before });
    return query.getMany();
  }

  /**
   * Claims the pending delivery's attempt when it is due by `due`: its due time moves to
   * `timeoutAt`. False when it is not pending or not due (another job claimed it).
   */
  async claimAttempt(id: string, due: Date, timeoutAt: Date): Promise<boolean> {
    const claim = await this.dataSource
      .getRepository(NotificationDelivery)
      .createQueryBuilder()
      .update()
      .set({ nextAttemptAt: timeoutAt })
      .where('id = :deliveryId AND status = :pending AND next_attempt_at <= :due', {
        deliveryId: id,
        pending: 'pending',
        due,
      })
      .execute();
    return Boolean(claim.affected);
  }

  /**
   * Records an attempt's outcome on a pending delivery still at `attemptsBefore` attempts (a
   * resend made meanwhile starts over and is not overwritten); false when it was not.
   */
  async settleAttempt(
    id: string,
    attemptsBefore: number,
    outcome: Pick<
      NotificationDelivery,
      'status' | 'attempts' | 'responseCode' | 'lastError' | 'nextAttemptAt' | 'lastAttemptAt'
    >,
  ): Promise<boolean> {
    const result = await this.dataSource
      .getRepository(NotificationDelivery)
      .createQueryBuilder()
      .update()
      .set(outcome)
      .where('id = :id AND status = :pending AND attempts = :before', {
        id,
        pending: 'pending',
        before: attemptsBefore,
      })
      .execute();
    return Boolean(result.affected);
  }

  /** Makes a failed delivery pending again from its first attempt; false when it is not failed. */
  async restartFailed(manager: EntityManager, id: string, nextAttemptAt: Date): Promise<boolean> {
    const result = await manager
      .getRepository(NotificationDelivery)
      .update({ id, status: 'failed' }, { status: 'pending', attempts: 0, nextAttemptAt });
    return Boolean(result.affected);
  }
}
