import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { TeamRole } from '../../common/auth/roles';

@Entity('api_keys')
export class ApiKey {
  @PrimaryColumn({ type: 'varchar', length: 22 })
  id: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @Column({ name: 'user_id', type: 'varchar', length: 22, nullable: true })
  userId: string | null;

  @Column({ type: 'varchar', length: 128 })
  name: string;

  @Column({ type: 'varchar', length: 16 })
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
  @Column({ name: 'run_id', type: 'varchar', length: 36, nullable: true })
  runId?: string | null;

  @Column({ name: 'run_execution_id', type: 'int', nullable: true })
  runExecutionId?: number | null;
}
