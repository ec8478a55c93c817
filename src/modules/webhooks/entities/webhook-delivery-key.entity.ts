import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../../database/column-types';
import { WebhookDelivery } from './webhook-delivery.entity';

/**
 * A dedup key of an accepted delivery beside its `dedup_key` and `content_key`: the provider's
 * unsigned id (`provider:<id>`) or the sender's `X-Ambient-Delivery-Id` (`sender:<id>`), kept
 * whenever sent, unique per webhook. Written in the transaction that commits the delivery, and only
 * for deliveries that carry such an id (the others pay nothing for it); removed with its entry.
 */
@Entity('webhook_delivery_keys')
@Index('idx_webhook_delivery_keys_entry', ['webhookId', 'entryDedupKey'])
@ForeignKey(() => WebhookDelivery, ['webhookId', 'entryDedupKey'], ['webhookId', 'dedupKey'], {
  name: 'fk_webhook_delivery_keys_entry',
  onDelete: 'CASCADE',
})
export class WebhookDeliveryKey {
  @PrimaryColumn({ name: 'webhook_id', ...asciiId(22) })
  webhookId: string;

  @PrimaryColumn({ name: 'dedup_key', ...asciiId(255) })
  dedupKey: string;

  /** The accepted entry's own `dedup_key` (unique per webhook): the entry the key belongs to. */
  @Column({ name: 'entry_dedup_key', ...asciiId(255) })
  entryDedupKey: string;
}
