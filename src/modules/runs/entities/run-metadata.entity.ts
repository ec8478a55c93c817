import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asciiId, exactText } from '../../../database/column-types';

/** One metadata pair of a run, in its own indexed table so `metadata[k]=v` filters use an index. */
@Entity('run_metadata')
@Index('idx_run_metadata_lookup', ['teamId', 'key', 'value'])
export class RunMetadata {
  @PrimaryColumn({ name: 'run_id', ...asciiId(36) })
  runId: string;

  @PrimaryColumn({ name: 'meta_key', ...asciiId(64) })
  key: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @Column({ name: 'meta_value', ...exactText(256) })
  value: string;
}
