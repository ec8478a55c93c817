import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../database/column-types';
import { Team } from '../teams';
import type { SecretPurpose, SecretScope } from './secret-scope';

/** A team's managed secret; the value is only ever stored encrypted (see SecretCipher). */
@Entity('team_secrets')
@Index('uq_team_secrets_name', ['teamId', 'name'], { unique: true })
export class TeamSecret {
  @PrimaryColumn(asciiId(22))
  id: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  @ForeignKey(() => Team, { name: 'fk_team_secrets_team', onDelete: 'CASCADE' })
  teamId: string;

  @Column(asciiId(128))
  name: string;

  @Column({ type: 'varchar', length: 512, nullable: true })
  description: string | null;

  /** The runs that may have it (see secret-scope.ts); null: every run of the team. */
  @Column({ type: 'json', nullable: true })
  scope: SecretScope | null;

  /** `webhook`: a webhook's signing secret or URL token, never given to a run; null: a run secret. */
  @Column({ ...asciiId(16), nullable: true })
  purpose: SecretPurpose | null;

  @Column({ type: 'mediumblob' })
  ciphertext: Buffer;

  @Column({ name: 'created_by', ...asciiId(22), nullable: true })
  createdBy: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
