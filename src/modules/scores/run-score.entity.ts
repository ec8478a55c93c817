import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One accepted verdict of a judge run about a run. */
@Entity('run_scores')
export class RunScore {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'target_run_id', type: 'varchar', length: 36 })
  targetRunId: string;

  @Column({ name: 'judge_run_id', type: 'varchar', length: 36 })
  judgeRunId: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
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
