import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { EnvironmentConfig } from './environment-config';

/** A team's environment: the repositories and setup commands a run's workspace is prepared from. */
@Entity('environments')
export class Environment {
  @PrimaryColumn({ type: 'varchar', length: 22 })
  id: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'json' })
  config: EnvironmentConfig;

  @Column({ name: 'setup_failed', type: 'boolean' })
  setupFailed: boolean;

  /** Anyone holding this token can add the environment to their own team (link sharing). */
  @Column({ name: 'share_token', type: 'varchar', length: 43, nullable: true })
  shareToken: string | null;

  @Column({ name: 'creator_id', type: 'varchar', length: 22, nullable: true })
  creatorId: string | null;

  @Column({ name: 'last_editor_id', type: 'varchar', length: 22, nullable: true })
  lastEditorId: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}

/** Guest access: another team may list the environment and run in it. */
@Entity('environment_grants')
export class EnvironmentGrant {
  @PrimaryColumn({ name: 'environment_id', type: 'varchar', length: 22 })
  environmentId: string;

  @PrimaryColumn({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
