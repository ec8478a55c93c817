import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { RunSource, RunState } from '../run-state';
import type {
  AgentConfig,
  RequestUsage,
  ResolvedAgentSkill,
  ScheduleInfo,
  StatusMessage,
} from '../../run-config';

@Entity('runs')
export class Run {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @Column({ name: 'creator_id', type: 'varchar', length: 22, nullable: true })
  creatorId: string | null;

  @Column({ name: 'executor_id', type: 'varchar', length: 22, nullable: true })
  executorId: string | null;

  @Column({ type: 'varchar', length: 255 })
  title: string;

  @Column({ type: 'mediumtext' })
  prompt: string;

  @Column({ type: 'varchar', length: 16 })
  state: RunState;

  @Column({ type: 'varchar', length: 32 })
  source: RunSource;

  @Column({ name: 'execution_location', type: 'varchar', length: 8 })
  executionLocation: 'LOCAL' | 'REMOTE';

  @Column({ type: 'varchar', length: 16 })
  mode: string;

  @Column({ type: 'json' })
  config: AgentConfig;

  @Column({ name: 'config_name', type: 'varchar', length: 255, nullable: true })
  configName: string | null;

  @Column({ name: 'model_id', type: 'varchar', length: 128, nullable: true })
  modelId: string | null;

  @Column({ name: 'environment_id', type: 'varchar', length: 22, nullable: true })
  environmentId: string | null;

  @Column({ name: 'skill_spec', type: 'varchar', length: 512, nullable: true })
  skillSpec: string | null;

  /** Set when the skill spec resolved to a SKILL.md at creation. */
  @Column({ name: 'agent_skill', type: 'json', nullable: true })
  agentSkill: ResolvedAgentSkill | null;

  @Column({ name: 'schedule_id', type: 'varchar', length: 36, nullable: true })
  scheduleId: string | null;

  @Column({ name: 'schedule_info', type: 'json', nullable: true })
  scheduleInfo: ScheduleInfo | null;

  @Column({ name: 'parent_run_id', type: 'varchar', length: 36, nullable: true })
  parentRunId: string | null;

  @Column({ name: 'root_run_id', type: 'varchar', length: 36 })
  rootRunId: string;

  @Column({ type: 'int' })
  depth: number;

  @Column({ name: 'conversation_id', type: 'varchar', length: 36 })
  conversationId: string;

  @Column({ name: 'session_id', type: 'varchar', length: 36, nullable: true })
  sessionId: string | null;

  @Column({ name: 'status_message', type: 'json', nullable: true })
  statusMessage: StatusMessage | null;

  @Column({ name: 'request_usage', type: 'json', nullable: true })
  requestUsage: RequestUsage | null;

  @Column({ type: 'json', nullable: true })
  metadata: Record<string, string> | null;

  @Column({ type: 'boolean' })
  interactive: boolean;

  @Column({ name: 'execution_count', type: 'int' })
  executionCount: number;

  @Column({ type: 'int' })
  attempt: number;

  /** The self-hosted worker id the run must run on; null for Ambient's own workers. */
  @Column({ name: 'worker_host', type: 'varchar', length: 128, nullable: true })
  workerHost: string | null;

  /** Set while a self-hosted run waits for a claim across offers; the claim timeout counts from it. */
  @Column({ name: 'unclaimed_since', type: 'datetime', precision: 3, nullable: true })
  unclaimedSince: Date | null;

  /** QUEUED without a job: no concurrency slot was free; dispatched when one frees (RunCapacity). */
  @Column({ name: 'at_capacity', type: 'boolean', default: false })
  atCapacity: boolean;

  /** The run's own cost cap (USD), asked for at creation; null = the limits' only. */
  @Column({
    name: 'max_cost_usd',
    type: 'decimal',
    precision: 18,
    scale: 6,
    nullable: true,
    transformer: {
      to: (value: number | null) => value,
      from: (value: string | null) => (value === null ? null : Number(value)),
    },
  })
  maxCostUsd: number | null;

  @Column({ name: 'lease_owner', type: 'varchar', length: 64, nullable: true })
  leaseOwner: string | null;

  @Column({ name: 'lease_expires_at', type: 'datetime', precision: 3, nullable: true })
  leaseExpiresAt: Date | null;

  /** The workspace of an ended run is kept until then (follow-ups, a debug agent); then deleted. */
  @Column({ name: 'workspace_retained_until', type: 'datetime', precision: 3, nullable: true })
  workspaceRetainedUntil: Date | null;

  /** The workspace volume that holds the kept workspace (set together with the deadline). */
  @Column({ name: 'workspace_volume', type: 'varchar', length: 128, nullable: true })
  workspaceVolume: string | null;

  @Column({ name: 'started_at', type: 'datetime', precision: 3, nullable: true })
  startedAt: Date | null;

  @Column({ name: 'finished_at', type: 'datetime', precision: 3, nullable: true })
  finishedAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
