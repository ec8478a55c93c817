import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A judge run dispatched to score another run; only its run-scoped key may report scores. */
@Entity('run_judges')
export class RunJudge {
  @PrimaryColumn({ name: 'judge_run_id', type: 'varchar', length: 36 })
  judgeRunId: string;

  @Column({ name: 'target_run_id', type: 'varchar', length: 36 })
  targetRunId: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
