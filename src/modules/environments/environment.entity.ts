import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../database/column-types';
import type { EnvironmentConfig } from './environment-config';

/** A team's environment: the repositories and setup commands a run's workspace is prepared from. */
@Entity('environments')
@Index('uq_environments_share_token', ['shareToken'], { unique: true })
@Index('idx_environments_team', ['teamId', 'updatedAt'])
export class Environment {
  @PrimaryColumn(asciiId(22))
  id: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'json' })
  config: EnvironmentConfig;

  /** Counts the owner's changes: a guest team runs in the version its admin accepted. */
  @Column({ type: 'int', unsigned: true, default: 1 })
  version: number;

  @Column({ name: 'setup_failed', type: 'boolean', default: false })
  setupFailed: boolean;

  /** Anyone holding this token can add the environment to their own team (link sharing). */
  @Column({ name: 'share_token', ...asciiId(43), nullable: true })
  shareToken: string | null;

  @Column({ name: 'creator_id', ...asciiId(22), nullable: true })
  creatorId: string | null;

  @Column({ name: 'last_editor_id', ...asciiId(22), nullable: true })
  lastEditorId: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}

/** What a guest team's admin accepted of an environment: its name and config at that version. */
export interface AcceptedEnvironment {
  name: string;
  config: EnvironmentConfig;
}

/**
 * Guest access, offered by the owning team (grant or share link). It counts only once an admin of
 * the guest team accepted a version: the guest then lists and runs in that version, whatever the
 * owner changes later, until it accepts the newer one.
 */
@Entity('environment_grants')
@Index('idx_environment_grants_team', ['teamId'])
export class EnvironmentGrant {
  @PrimaryColumn({ name: 'environment_id', ...asciiId(22) })
  environmentId: string;

  @PrimaryColumn({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'accepted_version', type: 'int', unsigned: true, nullable: true })
  acceptedVersion: number | null;

  @Column({ name: 'accepted_config', type: 'json', nullable: true })
  acceptedConfig: AcceptedEnvironment | null;

  @Column({ name: 'accepted_at', type: 'datetime', precision: 3, nullable: true })
  acceptedAt: Date | null;

  @Column({ name: 'accepted_by', type: 'varchar', length: 22, nullable: true })
  acceptedBy: string | null;

  /** The guest team's own `setup_failed` (its runs never change the owner's). */
  @Column({ name: 'setup_failed', type: 'boolean', default: false })
  setupFailed: boolean;
}
