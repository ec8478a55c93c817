import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

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
export class WebhookDelivery {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'webhook_id', type: 'varchar', length: 22 })
  webhookId: string;

  @Column({ name: 'delivery_id', type: 'varchar', length: 255, nullable: true })
  deliveryId: string | null;

  @Column({ name: 'dedup_key', type: 'varchar', length: 255, nullable: true })
  dedupKey: string | null;

  /** Accepted entries of signatures that cover no id: digest of the signed content (unique). */
  @Column({ name: 'content_key', type: 'varchar', length: 80, nullable: true })
  contentKey: string | null;

  /** A redelivery's original: the log entry whose stored payload it evaluated again. */
  @Column({ name: 'redelivery_of', type: 'bigint', nullable: true })
  redeliveryOf: string | null;

  @Column({ type: 'varchar', length: 24 })
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
