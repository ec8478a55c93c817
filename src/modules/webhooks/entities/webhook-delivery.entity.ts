import { Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn } from 'typeorm';
import { asciiId, asciiWord } from '../../../database/column-types';
import { Webhook } from './webhook.entity';

export const DELIVERY_STATUSES = [
  'accepted',
  'duplicate',
  'rejected_auth',
  'rejected_invalid_json',
  'rejected_too_large',
] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The labels the delivery log shows (the Warp dashboard's wording). */
export const STATUS_LABELS: Record<DeliveryStatus, string> = {
  accepted: 'Accepted',
  duplicate: 'Duplicate',
  rejected_auth: 'Rejected (auth)',
  rejected_invalid_json: 'Rejected (invalid JSON)',
  rejected_too_large: 'Rejected (too large)',
};

/** One entry of a webhook's delivery log; accepted entries keep the body and the dedup keys. */
@Entity('webhook_deliveries')
@Index('uq_webhook_deliveries_dedup', ['webhookId', 'dedupKey'], { unique: true })
@Index('uq_webhook_deliveries_content', ['webhookId', 'contentKey'], { unique: true })
@Index('idx_webhook_deliveries_log', ['webhookId', 'id'])
@Index('idx_webhook_deliveries_due', ['evaluationDueAt'])
@Index('idx_webhook_deliveries_received', ['receivedAt'])
@Index('idx_webhook_deliveries_redelivery_of', ['redeliveryOf'])
export class WebhookDelivery {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'webhook_id', ...asciiId(22) })
  @ForeignKey(() => Webhook, { name: 'fk_webhook_deliveries_webhook', onDelete: 'CASCADE' })
  webhookId: string;

  @Column({ name: 'delivery_id', ...asciiId(255), nullable: true })
  deliveryId: string | null;

  @Column({ name: 'dedup_key', ...asciiId(255), nullable: true })
  dedupKey: string | null;

  /** Accepted entries of signatures that cover no id: digest of the signed content (unique). */
  @Column({ name: 'content_key', ...asciiId(80), nullable: true })
  contentKey: string | null;

  /** A redelivery's original: the log entry whose stored payload it evaluated again. */
  @Column({ name: 'redelivery_of', type: 'bigint', nullable: true })
  redeliveryOf: string | null;

  @Column(asciiWord(24))
  status: DeliveryStatus;

  @Column({ name: 'size_bytes', type: 'int' })
  sizeBytes: number;

  @Column({ name: 'received_at', type: 'datetime', precision: 3 })
  receivedAt: Date;

  @Column({ type: 'mediumblob', nullable: true })
  payload: Buffer | null;

  @Column({ name: 'evaluation_due_at', type: 'datetime', precision: 3, nullable: true })
  evaluationDueAt: Date | null;

  @Column({ name: 'evaluated_at', type: 'datetime', precision: 3, nullable: true })
  evaluatedAt: Date | null;
}
