import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One metadata pair of a run, in its own indexed table so `metadata[k]=v` filters use an index. */
@Entity('run_metadata')
export class RunMetadata {
  @PrimaryColumn({ name: 'run_id', type: 'varchar', length: 36 })
  runId: string;

  @PrimaryColumn({ name: 'meta_key', type: 'varchar', length: 64 })
  key: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @Column({ name: 'meta_value', type: 'varchar', length: 256 })
  value: string;
}
