import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { asciiId, asciiWord } from '../../database/column-types';
import { Team } from '../teams';
import type { AgentConfig } from '../run-config';

/**
 * A scheduled agent. `next_run_at` is the tick the scheduler fires next (null while paused);
 * advancing it and recording the firing happen in one transaction, which makes a tick fire
 * once however many schedulers run.
 */
@Entity('schedules')
@Index('idx_schedules_team_name', ['teamId', 'name', 'id'])
@Index('idx_schedules_due', ['enabled', 'nextRunAt'])
export class Schedule {
  @PrimaryColumn(asciiId(36))
  id: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  @ForeignKey(() => Team, { name: 'fk_schedules_team', onDelete: 'CASCADE' })
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

  @Column({ name: 'agent_uid', ...asciiId(22), nullable: true })
  agentUid: string | null;

  @Column({ type: 'json', nullable: true })
  metadata: Record<string, string> | null;

  @Column({ ...asciiWord(16), default: 'normal' })
  mode: string;

  @Column({ name: 'created_by', ...asciiId(22), nullable: true })
  createdBy: string | null;

  @Column({ name: 'updated_by', ...asciiId(22), nullable: true })
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
