import { Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn } from 'typeorm';
import { NotificationEndpoint } from './notification-endpoint.entity';
import type { NotificationDeliveryStatus, NotificationEvent } from '../notification-events';

/**
 * One notification to one endpoint, and its delivery log entry. Written in the transaction of
 * what it announces; `nextAttemptAt` is set while an attempt is due (the sweeper's index).
 */
@Entity('notification_deliveries')
@Index('idx_notification_deliveries_endpoint', ['endpointId', 'id'])
@Index('idx_notification_deliveries_due', ['nextAttemptAt'])
@Index('idx_notification_deliveries_created', ['createdAt'])
export class NotificationDelivery {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'endpoint_id', type: 'varchar', length: 22 })
  @ForeignKey(() => NotificationEndpoint, {
    name: 'fk_notification_deliveries_endpoint',
    onDelete: 'CASCADE',
  })
  endpointId: string;

  /** The `webhook-id` header: the same on every attempt, so receivers can deduplicate. */
  @Column({ name: 'message_id', type: 'varchar', length: 64 })
  messageId: string;

  @Column({ type: 'varchar', length: 64 })
  event: NotificationEvent;

  /** The Standard Webhooks envelope (JSON text); a Slack endpoint gets a line made from it. */
  @Column({ type: 'mediumtext' })
  payload: string;

  @Column({ type: 'varchar', length: 16 })
  status: NotificationDeliveryStatus;

  @Column({ type: 'int' })
  attempts: number;

  @Column({ name: 'response_code', type: 'int', nullable: true })
  responseCode: number | null;

  @Column({ name: 'last_error', type: 'varchar', length: 1024, nullable: true })
  lastError: string | null;

  @Column({ name: 'next_attempt_at', type: 'datetime', precision: 3, nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'last_attempt_at', type: 'datetime', precision: 3, nullable: true })
  lastAttemptAt: Date | null;
}
