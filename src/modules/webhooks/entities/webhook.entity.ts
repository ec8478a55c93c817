import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { asciiId, asciiWord, exactText } from '../../../database/column-types';
import { Factory } from '../factories/entities/factory.entity';
import type { AuthMode } from '../auth-modes';
import type { SignatureScheme } from '../verifiers';

/**
 * A custom webhook of a factory. `secretCiphertext` is a snapshot of its team secret taken when
 * the definition applied (or the webhook was re-enabled or rotated), so a changed team secret
 * takes effect only then, as documented.
 */
@Entity('webhooks')
@Index('idx_webhooks_factory', ['factoryId', 'deletedAt'])
@Index('idx_webhooks_team', ['teamId'])
export class Webhook {
  @PrimaryColumn(asciiId(22))
  id: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @Column({ name: 'factory_id', ...asciiId(22) })
  @ForeignKey(() => Factory, { name: 'fk_webhooks_factory', onDelete: 'CASCADE' })
  factoryId: string;

  @Column(exactText(64))
  name: string;

  @Column({ name: 'auth_mode', ...asciiWord(16) })
  authMode: AuthMode;

  @Column({ name: 'signature_scheme', ...asciiWord(32), nullable: true })
  signatureScheme: SignatureScheme | null;

  @Column({ name: 'secret_name', ...asciiId(128) })
  secretName: string;

  @Column({ name: 'secret_ciphertext', type: 'blob' })
  secretCiphertext: Buffer;

  @Column({ name: 'delivery_id_header', ...asciiWord(128), nullable: true })
  deliveryIdHeader: string | null;

  @Column({ type: 'boolean' })
  enabled: boolean;

  @Column({ name: 'secret_updated_at', type: 'datetime', precision: 3 })
  secretUpdatedAt: Date;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;

  @Column({ name: 'deleted_at', type: 'datetime', precision: 3, nullable: true })
  deletedAt: Date | null;
}
