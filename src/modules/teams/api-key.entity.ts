import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import type { TeamRole } from '../../common/auth/roles';
import { asciiId } from '../../database/column-types';
import { Team } from './team.entity';
import { User } from './user.entity';

@Entity('api_keys')
@Index('uq_api_keys_prefix', ['prefix'], { unique: true })
@Index('idx_api_keys_team', ['teamId'])
@Index('idx_api_keys_live_run', ['revokedAt', 'runId'])
@Index('idx_api_keys_worker_credential', ['workerCredentialId', 'revokedAt'])
export class ApiKey {
  @PrimaryColumn(asciiId(22))
  id: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  @ForeignKey(() => Team, { name: 'fk_api_keys_team', onDelete: 'CASCADE' })
  teamId: string;

  @Column({ name: 'user_id', ...asciiId(22), nullable: true })
  @ForeignKey(() => User, { name: 'fk_api_keys_user', onDelete: 'CASCADE' })
  userId: string | null;

  @Column({ type: 'varchar', length: 128 })
  name: string;

  @Column(asciiId(16))
  prefix: string;

  @Column({ name: 'secret_hash', type: 'binary', length: 32 })
  secretHash: Buffer;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'datetime', precision: 3, nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'datetime', precision: 3, nullable: true })
  revokedAt: Date | null;

  /** The role the key acts with; null: its user's (agent identity and run-scoped keys). */
  @Column({ type: 'varchar', length: 16, nullable: true })
  role?: TeamRole | null;

  /** After this instant the key no longer authenticates; null: never expires. */
  @Column({ name: 'expires_at', type: 'datetime', precision: 3, nullable: true })
  expiresAt?: Date | null;

  /** A run-scoped key acts only on this run, for one of its executions (see RunKeysService). */
  @Column({ name: 'run_id', ...asciiId(36), nullable: true })
  runId?: string | null;

  @Column({ name: 'run_execution_id', type: 'int', nullable: true })
  runExecutionId?: number | null;

  /**
   * A run-scoped key handed to a self-hosted worker: the worker credential its connection was
   * made with. Revoking the credential revokes the key (WorkerCredentialsService.revoke).
   */
  @Column({ name: 'worker_credential_id', ...asciiId(22), nullable: true })
  workerCredentialId?: string | null;
}
