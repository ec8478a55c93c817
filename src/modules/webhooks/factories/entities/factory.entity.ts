import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { asciiId, asciiWord } from '../../../../database/column-types';
import { Team } from '../../../teams';
import type { JsonObject } from '../../../../common/json';

export type FactorySource = 'managed' | 'repository';

/** The outcome of the last attempt to apply a repository-backed definition. */
export interface LastSync {
  at: string;
  commit: string | null;
  status: 'applied' | 'unchanged' | 'failed';
  message?: string;
  diagnostics?: JsonObject[];
}

@Entity('factories')
@Index('idx_factories_team', ['teamId', 'createdAt', 'id'])
@Index('idx_factories_source', ['source', 'deletedAt'])
export class Factory {
  @PrimaryColumn(asciiId(22))
  id: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  @ForeignKey(() => Team, { name: 'fk_factories_team', onDelete: 'CASCADE' })
  teamId: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column(asciiWord(16))
  source: FactorySource;

  @Column({ name: 'repository_url', type: 'varchar', length: 1024, nullable: true })
  repositoryUrl: string | null;

  @Column({ name: 'repository_branch', type: 'varchar', length: 255, nullable: true })
  repositoryBranch: string | null;

  @Column({ name: 'repository_path', type: 'varchar', length: 512, nullable: true })
  repositoryPath: string | null;

  /** Name of the team secret holding a token for the repository (https), if it is private. */
  @Column({ name: 'repository_credentials_secret', type: 'varchar', length: 128, nullable: true })
  repositoryCredentialsSecret: string | null;

  /** factory.yaml as applied. */
  @Column({ type: 'json', nullable: true })
  settings: JsonObject | null;

  @Column({ name: 'applied_commit', ...asciiId(64), nullable: true })
  appliedCommit: string | null;

  @Column({ name: 'applied_at', type: 'datetime', precision: 3, nullable: true })
  appliedAt: Date | null;

  @Column({ name: 'last_sync', type: 'json', nullable: true })
  lastSync: LastSync | null;

  @Column({ name: 'sync_lock_until', type: 'datetime', precision: 3, nullable: true })
  syncLockUntil: Date | null;

  @Column({ name: 'created_by', ...asciiId(22), nullable: true })
  createdBy: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;

  @Column({ name: 'deleted_at', type: 'datetime', precision: 3, nullable: true })
  deletedAt: Date | null;
}
