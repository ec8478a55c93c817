import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../database/column-types';
import { Run } from '../runs';

/** A judge run dispatched to score another run; only its run-scoped key may report scores. */
@Entity('run_judges')
@Index('ix_run_judges_target', ['targetRunId'])
export class RunJudge {
  @PrimaryColumn({ name: 'judge_run_id', ...asciiId(36) })
  @ForeignKey(() => Run, { name: 'fk_run_judges_judge', onDelete: 'CASCADE' })
  judgeRunId: string;

  @Column({ name: 'target_run_id', ...asciiId(36) })
  @ForeignKey(() => Run, { name: 'fk_run_judges_target', onDelete: 'CASCADE' })
  targetRunId: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
