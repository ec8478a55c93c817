import { Column, Entity, PrimaryColumn } from 'typeorm';

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
export class ScheduleFiring {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'schedule_id', type: 'varchar', length: 36 })
  scheduleId: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @Column({ name: 'scheduled_for', type: 'datetime', precision: 3 })
  scheduledFor: Date;

  @Column({ type: 'varchar', length: 16 })
  status: FiringStatus;

  @Column({ name: 'run_id', type: 'varchar', length: 36, nullable: true })
  runId: string | null;

  /** The schedule's name and cron when the tick fired, for the run's `schedule` field. */
  @Column({ name: 'schedule_name', type: 'varchar', length: 255 })
  scheduleName: string;

  @Column({ name: 'cron_schedule', type: 'varchar', length: 128 })
  cronSchedule: string;

  @Column({ name: 'missed_ticks', type: 'int' })
  missedTicks: number;

  @Column({ type: 'text', nullable: true })
  note: string | null;

  @Column({ name: 'claimed_at', type: 'datetime', precision: 3 })
  claimedAt: Date;

  @Column({ name: 'finished_at', type: 'datetime', precision: 3, nullable: true })
  finishedAt: Date | null;
}
