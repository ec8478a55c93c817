import { Column, Entity, ForeignKey, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../../database/column-types';
import { WebhookDelivery } from './webhook-delivery.entity';

/** What evaluating a delivery did for one automation: the run it started, or why not. */
@Entity('webhook_delivery_runs')
export class WebhookDeliveryRun {
  @PrimaryColumn({ name: 'delivery_entry_id', type: 'bigint' })
  @ForeignKey(() => WebhookDelivery, { name: 'fk_wdr_delivery', onDelete: 'CASCADE' })
  deliveryEntryId: string;

  @PrimaryColumn({ name: 'automation_id', ...asciiId(22) })
  automationId: string;

  @Column({ name: 'run_id', ...asciiId(36), nullable: true })
  runId: string | null;

  /** The Oz error code of the refusal when no run started (e.g. `invalid_request`). */
  @Column({ name: 'error_code', type: 'varchar', length: 64, nullable: true })
  errorCode: string | null;

  @Column({ type: 'varchar', length: 1024, nullable: true })
  error: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
