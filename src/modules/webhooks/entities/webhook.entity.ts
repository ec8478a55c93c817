import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { AuthMode } from '../auth-modes';
import type { SignatureScheme } from '../verifiers';

/**
 * A custom webhook of a factory. `secretCiphertext` is a snapshot of its team secret taken when
 * the definition applied (or the webhook was re-enabled or rotated), so a changed team secret
 * takes effect only then, as documented.
 */
@Entity('webhooks')
export class Webhook {
  @PrimaryColumn({ type: 'varchar', length: 22 })
  id: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @Column({ name: 'factory_id', type: 'varchar', length: 22 })
  factoryId: string;

  @Column({ type: 'varchar', length: 64 })
  name: string;

  @Column({ name: 'auth_mode', type: 'varchar', length: 16 })
  authMode: AuthMode;

  @Column({ name: 'signature_scheme', type: 'varchar', length: 32, nullable: true })
  signatureScheme: SignatureScheme | null;

  @Column({ name: 'secret_name', type: 'varchar', length: 128 })
  secretName: string;

  @Column({ name: 'secret_ciphertext', type: 'blob' })
  secretCiphertext: Buffer;

  @Column({ name: 'delivery_id_header', type: 'varchar', length: 128, nullable: true })
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
