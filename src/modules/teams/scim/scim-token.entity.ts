import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../../database/column-types';

/** A bearer token of a team's SCIM client (the identity provider); the secret is never stored. */
@Entity('scim_tokens')
@Index('ix_scim_tokens_team', ['teamId', 'createdAt'])
export class ScimToken {
  @PrimaryColumn(asciiId(22))
  id: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @Column({ type: 'varchar', length: 128 })
  name: string;

  /** Public lookup prefix (`scim_<prefix>_<secret>`). */
  @Index('uq_scim_tokens_prefix', { unique: true })
  @Column(asciiId(16))
  prefix: string;

  /** SHA-256 of the whole token. */
  @Column({ name: 'secret_hash', type: 'binary', length: 32 })
  secretHash: Buffer;

  /** The admin who made it. */
  @Column({ name: 'created_by', ...asciiId(22) })
  createdBy: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'datetime', precision: 3, nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'datetime', precision: 3, nullable: true })
  revokedAt: Date | null;
}
