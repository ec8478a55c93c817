import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { NotificationEvent, NotificationFormat } from '../notification-events';

const commaList = {
  to: (events: readonly string[]) => events.join(','),
  from: (text: string) => (text ? text.split(',') : []),
};

/** A team's outgoing webhook; `secretCiphertext` is its `whsec_` signing secret, encrypted. */
@Entity('notification_endpoints')
@Index('idx_notification_endpoints_team', ['teamId', 'createdAt'])
export class NotificationEndpoint {
  @PrimaryColumn({ type: 'varchar', length: 22 })
  id: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  @Column({ type: 'varchar', length: 512, transformer: commaList })
  events: NotificationEvent[];

  @Column({ type: 'varchar', length: 16 })
  format: NotificationFormat;

  @Column({ type: 'boolean' })
  enabled: boolean;

  @Column({ name: 'secret_ciphertext', type: 'blob' })
  secretCiphertext: Buffer;

  @Column({ name: 'secret_updated_at', type: 'datetime', precision: 3 })
  secretUpdatedAt: Date;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
