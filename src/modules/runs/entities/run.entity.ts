import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asciiId, asciiWord } from '../../../database/column-types';
import type { RunSource, RunState } from '../run-state';
import type {
  AgentConfig,
  RequestUsage,
  ResolvedAgentSkill,
  ScheduleInfo,
  StatusMessage,
} from '../../run-config';

@Entity('runs')
@Index('idx_runs_team_updated', ['teamId', 'updatedAt', 'id'])
@Index('idx_runs_team_created', ['teamId', 'createdAt', 'id'])
@Index('idx_runs_team_state_updated', ['teamId', 'state', 'updatedAt', 'id'])
@Index('idx_runs_team_state_created', ['teamId', 'state', 'createdAt', 'id'])
@Index('idx_runs_team_title', ['teamId', 'title', 'id'])
@Index('idx_runs_team_skill', ['teamId', 'skillSpec', 'id'])
@Index('idx_runs_team_name', ['teamId', 'configName'])
@Index('idx_runs_team_schedule', ['teamId', 'scheduleId'])
@Index('idx_runs_team_creator', ['teamId', 'creatorId'])
@Index('idx_runs_team_executor', ['teamId', 'executorId'])
@Index('idx_runs_team_environment', ['teamId', 'environmentId'])
@Index('idx_runs_state_updated', ['state', 'updatedAt'])
@Index('idx_runs_state_lease', ['state', 'leaseExpiresAt'])
@Index('idx_runs_conversation', ['conversationId'])
@Index('ft_runs_search', ['title', 'prompt', 'skillSpec'], { fulltext: true })
@Index('idx_runs_worker_host', ['teamId', 'workerHost', 'state', 'createdAt', 'id'])
@Index('idx_runs_self_hosted_state', ['state', 'workerHost'])
@Index('idx_runs_workspace_volume', ['workspaceVolume', 'workspaceRetainedUntil'])
@Index('idx_runs_waiting', ['atCapacity', 'state', 'teamId'])
@Index('idx_runs_content_retention', ['contentDeletedAt', 'finishedAt'])
export class Run {
  @PrimaryColumn(asciiId(36))
  id: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @Column({ name: 'creator_id', ...asciiId(22), nullable: true })
  creatorId: string | null;

  @Column({ name: 'executor_id', ...asciiId(22), nullable: true })
  executorId: string | null;

  @Column({ type: 'varchar', length: 255 })
  title: string;

  @Column({ type: 'mediumtext' })
  prompt: string;

  @Column(asciiWord(16))
  state: RunState;

  @Column(asciiWord(32))
  source: RunSource;

  @Column({ name: 'execution_location', ...asciiWord(8), default: 'REMOTE' })
  executionLocation: 'LOCAL' | 'REMOTE';

  @Column({ ...asciiWord(16), default: 'normal' })
  mode: string;

  @Column({ type: 'json' })
  config: AgentConfig;

  @Column({ name: 'config_name', type: 'varchar', length: 255, nullable: true })
  configName: string | null;

  @Column({ name: 'model_id', type: 'varchar', length: 128, nullable: true })
  modelId: string | null;

  @Column({ name: 'environment_id', ...asciiId(22), nullable: true })
  environmentId: string | null;

  @Column({ name: 'skill_spec', type: 'varchar', length: 512, nullable: true })
  skillSpec: string | null;

  /** Set when the skill spec resolved to a SKILL.md at creation. */
  @Column({ name: 'agent_skill', type: 'json', nullable: true })
  agentSkill: ResolvedAgentSkill | null;

  @Column({ name: 'schedule_id', ...asciiId(36), nullable: true })
  scheduleId: string | null;

  @Column({ name: 'schedule_info', type: 'json', nullable: true })
  scheduleInfo: ScheduleInfo | null;

  @Column({ name: 'parent_run_id', ...asciiId(36), nullable: true })
  parentRunId: string | null;

  @Column({ name: 'root_run_id', ...asciiId(36) })
  rootRunId: string;

  @Column({ type: 'int', default: 0 })
  depth: number;

  @Column({ name: 'conversation_id', ...asciiId(36) })
  conversationId: string;

  @Column({ name: 'session_id', ...asciiId(36), nullable: true })
  sessionId: string | null;

  @Column({ name: 'status_message', type: 'json', nullable: true })
  statusMessage: StatusMessage | null;

  @Column({ name: 'request_usage', type: 'json', nullable: true })
  requestUsage: RequestUsage | null;

  @Column({ type: 'json', nullable: true })
  metadata: Record<string, string> | null;

  @Column({ type: 'boolean', default: false })
  interactive: boolean;

  @Column({ name: 'execution_count', type: 'int', default: 0 })
  executionCount: number;

  @Column({ type: 'int', default: 0 })
  attempt: number;

  /** How long the run's ended executions ran, in total (ms): `run_time` without the running one. */
  @Column({
    name: 'run_time_ms',
    type: 'bigint',
    default: 0,
    transformer: { to: (value: number) => value, from: (value: string | number) => Number(value) },
  })
  runTimeMs: number;

  /** When the running execution was claimed; null between executions (see RunTransitions). */
  @Column({ name: 'execution_started_at', type: 'datetime', precision: 3, nullable: true })
  executionStartedAt: Date | null;

  /** The self-hosted worker id the run must run on; null for Ambient's own workers. */
  @Column({ name: 'worker_host', ...asciiId(128), nullable: true })
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

  /**
   * When the content retention (AMBIENT_RUN_CONTENT_RETENTION_DAYS) deleted the run's timeline,
   * conversation, follow-ups, attachments and artifacts; the run itself stays (RunContentRetention).
   */
  @Column({ name: 'content_deleted_at', type: 'datetime', precision: 3, nullable: true })
  contentDeletedAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
