import { Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn } from 'typeorm';
import { asciiId } from '../../database/column-types';
import { Run } from '../runs';

/** One accepted verdict of a judge run about a run. */
@Entity('run_scores')
@Index('ix_run_scores_target', ['targetRunId', 'id'])
export class RunScore {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'target_run_id', ...asciiId(36) })
  @ForeignKey(() => Run, { name: 'fk_run_scores_target', onDelete: 'CASCADE' })
  targetRunId: string;

  @Column({ name: 'judge_run_id', ...asciiId(36) })
  @ForeignKey(() => Run, { name: 'fk_run_scores_judge', onDelete: 'CASCADE' })
  judgeRunId: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @Column({ type: 'varchar', length: 100 })
  criterion: string;

  @Column({ type: 'varchar', length: 100, nullable: true })
  classification: string | null;

  @Column({ type: 'double', nullable: true })
  score: number | null;

  @Column({ type: 'text', nullable: true })
  reason: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
