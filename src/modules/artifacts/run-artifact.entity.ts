import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asciiId, asciiWord } from '../../database/column-types';
import type { JsonObject } from '../../common/json';

export const ARTIFACT_TYPES = [
  'PLAN',
  'PULL_REQUEST',
  'SCREENSHOT',
  'FILE',
  'EXTERNAL_REFERENCE',
] as const;
export type ArtifactType = (typeof ARTIFACT_TYPES)[number];

@Entity('run_artifacts')
@Index('idx_run_artifacts_run', ['runId'])
@Index('idx_run_artifacts_type', ['teamId', 'artifactType', 'runId'])
@Index('idx_run_artifacts_url', ['teamId', 'urlHash'])
export class RunArtifact {
  @PrimaryColumn(asciiId(22))
  id: string;

  @Column({ name: 'run_id', ...asciiId(36) })
  runId: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @Column({ name: 'artifact_type', ...asciiWord(32) })
  artifactType: ArtifactType;

  @Column({ type: 'json' })
  data: JsonObject;

  /** Readable through GET /agent/artifacts/{uid} without a key; otherwise only by the team. */
  @Column({ name: 'is_public', type: 'boolean', default: false })
  isPublic?: boolean;

  /** sha256 of the artifact's canonical URL (PULL_REQUEST, EXTERNAL_REFERENCE), for reverse lookup. */
  @Column({ name: 'url_hash', type: 'binary', length: 32, nullable: true })
  urlHash: Buffer | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
