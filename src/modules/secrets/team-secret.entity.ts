import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { SecretScope } from './secret-scope';

/** A team's managed secret; the value is only ever stored encrypted (see SecretCipher). */
@Entity('team_secrets')
export class TeamSecret {
  @PrimaryColumn({ type: 'varchar', length: 22 })
  id: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @Column({ type: 'varchar', length: 128 })
  name: string;

  @Column({ type: 'varchar', length: 512, nullable: true })
  description: string | null;

  /** The runs that may have it (see secret-scope.ts); null: every run of the team. */
  @Column({ type: 'json', nullable: true })
  scope: SecretScope | null;

  /** `webhook`: a webhook's signing secret or URL token, never given to a run; null: a run secret. */
  @Column({ type: 'varchar', length: 16, nullable: true })
  purpose: SecretPurpose | null;

  @Column({ type: 'mediumblob' })
  ciphertext: Buffer;

  @Column({ name: 'created_by', type: 'varchar', length: 22, nullable: true })
  createdBy: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}

export type SecretPurpose = 'webhook';
