import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { AgentConfig } from '../run-config';

/**
 * A scheduled agent. `next_run_at` is the tick the scheduler fires next (null while paused);
 * advancing it and recording the firing happen in one transaction, which makes a tick fire
 * once however many schedulers run.
 */
@Entity('schedules')
export class Schedule {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ name: 'cron_schedule', type: 'varchar', length: 128 })
  cronSchedule: string;

  @Column({ type: 'boolean' })
  enabled: boolean;

  @Column({ type: 'mediumtext' })
  prompt: string;

  @Column({ name: 'agent_config', type: 'json', nullable: true })
  agentConfig: AgentConfig | null;

  @Column({ name: 'agent_uid', type: 'varchar', length: 22, nullable: true })
  agentUid: string | null;

  @Column({ type: 'json', nullable: true })
  metadata: Record<string, string> | null;

  @Column({ type: 'varchar', length: 16 })
  mode: string;

  @Column({ name: 'created_by', type: 'varchar', length: 22, nullable: true })
  createdBy: string | null;

  @Column({ name: 'updated_by', type: 'varchar', length: 22, nullable: true })
  updatedBy: string | null;

  @Column({ name: 'next_run_at', type: 'datetime', precision: 3, nullable: true })
  nextRunAt: Date | null;

  @Column({ name: 'last_ran_at', type: 'datetime', precision: 3, nullable: true })
  lastRanAt: Date | null;

  @Column({ name: 'last_spawn_error', type: 'text', nullable: true })
  lastSpawnError: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
