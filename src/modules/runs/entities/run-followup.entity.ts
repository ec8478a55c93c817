import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asciiId, asciiWord } from '../../../database/column-types';

export type FollowupOutcome =
  'live_session' | 'queued_prompt' | 'handoff_execution' | 'queue_pending';

@Entity('run_followups')
@Index('idx_run_followups_run', ['runId', 'consumedAt'])
export class RunFollowup {
  @PrimaryColumn(asciiId(36))
  id: string;

  @Column({ name: 'run_id', ...asciiId(36) })
  runId: string;

  @Column({ type: 'mediumtext' })
  message: string;

  @Column({ ...asciiWord(16), nullable: true })
  mode: string | null;

  @Column(asciiWord(32))
  outcome: FollowupOutcome;

  @Column({ name: 'execution_id', type: 'int', nullable: true })
  executionId: number | null;

  @Column({ name: 'consumed_at', type: 'datetime', precision: 3, nullable: true })
  consumedAt: Date | null;

  /** Set when the run was cancelled before any execution took it: never delivered. */
  @Column({ name: 'dropped_at', type: 'datetime', precision: 3, nullable: true })
  droppedAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
