import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../../../database/column-types';

/** What a self-hosted worker registers with; only the secret's SHA-256 is stored. */
@Entity('worker_credentials')
@Index('uq_worker_credentials_prefix', ['prefix'], { unique: true })
@Index('idx_worker_credentials_team', ['teamId', 'createdAt'])
export class WorkerCredential {
  @PrimaryColumn(asciiId(22))
  id: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @Column({ type: 'varchar', length: 128 })
  name: string;

  /** The worker id it registers, or a pool of ids: `<prefix>*`. */
  @Column({ name: 'worker_id', ...asciiId(129) })
  workerId: string;

  @Column(asciiId(16))
  prefix: string;

  @Column({ name: 'secret_hash', type: 'binary', length: 32 })
  secretHash: Buffer;

  @Column({ name: 'created_by', ...asciiId(22), nullable: true })
  createdBy: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'datetime', precision: 3, nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'datetime', precision: 3, nullable: true })
  revokedAt: Date | null;
}
