import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { asciiId, asciiWord } from '../../database/column-types';
import { Schedule } from './schedule.entity';

/**
 * pending → its run is being created (or its scheduler died; the sweep finishes it);
 * spawned → the run exists; failed → creating the run was refused (see note); skipped → the
 * tick was missed beyond the catch-up window; cancelled → paused before the run was created.
 */
export type FiringStatus = 'pending' | 'spawned' | 'failed' | 'skipped' | 'cancelled';

/**
 * One fired tick of a schedule: the ledger that makes each tick produce exactly one run. The
 * run id is chosen when the tick is claimed, so finishing a firing twice cannot make two runs.
 */
@Entity('schedule_firings')
@Index('uq_schedule_firings_tick', ['scheduleId', 'scheduledFor'], { unique: true })
@Index('idx_schedule_firings_status', ['status', 'claimedAt'])
export class ScheduleFiring {
  @PrimaryColumn(asciiId(36))
  id: string;

  @Column({ name: 'schedule_id', ...asciiId(36) })
  @ForeignKey(() => Schedule, { name: 'fk_schedule_firings_schedule', onDelete: 'CASCADE' })
  scheduleId: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @Column({ name: 'scheduled_for', type: 'datetime', precision: 3 })
  scheduledFor: Date;

  @Column(asciiWord(16))
  status: FiringStatus;

  @Column({ name: 'run_id', ...asciiId(36), nullable: true })
  runId: string | null;

  /** The schedule's name and cron when the tick fired, for the run's `schedule` field. */
  @Column({ name: 'schedule_name', type: 'varchar', length: 255 })
  scheduleName: string;

  @Column({ name: 'cron_schedule', type: 'varchar', length: 128 })
  cronSchedule: string;

  @Column({ name: 'missed_ticks', type: 'int', default: 0 })
  missedTicks: number;

  @Column({ type: 'text', nullable: true })
  note: string | null;

  @Column({ name: 'claimed_at', type: 'datetime', precision: 3 })
  claimedAt: Date;

  @Column({ name: 'finished_at', type: 'datetime', precision: 3, nullable: true })
  finishedAt: Date | null;
}
