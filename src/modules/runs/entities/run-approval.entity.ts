import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { asciiId, asciiWord } from '../../../database/column-types';
import type { ApprovalRule } from '../../run-config';
import { Run } from './run.entity';

export type ApprovalKind = 'approval' | 'question';
export type ApprovalDecision = 'approve' | 'deny' | 'answer';

/**
 * Who decided a request: a person (by the API, the console or a follow-up), an agent identity
 * (a follow-up or a cancel by its key), or Ambient itself (the blocked timeout).
 */
export interface ApprovalDecider {
  type: 'user' | 'agent' | 'api_key' | 'system';
  id: string | null;
  name: string;
}

/**
 * A request of a run for a person: an approval (a tool call an approval rule asks about) or a
 * question (`ask_user`). Written with the run's move to BLOCKED; a decision queues the run again.
 */
@Entity('run_approvals')
@Index('idx_run_approvals_run', ['runId', 'requestedAt'])
@Index('idx_run_approvals_team_pending', ['teamId', 'decision', 'requestedAt'])
export class RunApproval {
  @PrimaryColumn(asciiId(36))
  id: string;

  @Column({ name: 'run_id', ...asciiId(36) })
  @ForeignKey(() => Run, { name: 'fk_run_approvals_run', onDelete: 'CASCADE' })
  runId: string;

  @Column({
    name: 'team_id',
    type: 'varchar',
    length: 22,
    charset: 'ascii',
    collation: 'ascii_bin',
  })
  teamId: string;

  /** The execution that asked. */
  @Column({ name: 'execution_id', type: 'int' })
  executionId: number;

  @Column(asciiWord(16))
  kind: ApprovalKind;

  /** The tool the model called (`run_command`, `mcp__github__create_pr`, `ask_user`), or `egress`. */
  @Column({ type: 'varchar', length: 255 })
  tool: string;

  /** The model's id of the tool call that waits for the decision (null for egress). */
  @Column({ name: 'tool_call_id', type: 'varchar', length: 255, nullable: true })
  toolCallId: string | null;

  @Column({ type: 'json' })
  arguments: Record<string, unknown>;

  /** The rule that asked (null for a question). */
  @Column({ type: 'json', nullable: true })
  rule: ApprovalRule | null;

  /** The pending action in words, as the run's status message shows it. */
  @Column({ type: 'varchar', length: 1000 })
  summary: string;

  @Column({ name: 'requested_at', type: 'datetime', precision: 3 })
  requestedAt: Date;

  @Column({ ...asciiWord(16), nullable: true })
  decision: ApprovalDecision | null;

  /** Why it was denied, or the answer to a question. */
  @Column({ type: 'mediumtext', nullable: true })
  comment: string | null;

  @Column({ name: 'decided_by', type: 'json', nullable: true })
  decidedBy: ApprovalDecider | null;

  @Column({ name: 'decided_at', type: 'datetime', precision: 3, nullable: true })
  decidedAt: Date | null;

  /**
   * The execution that took the decision into the conversation (ran the approved call, or told
   * the model of the denial or the answer): set once, under the execution's fence.
   */
  @Column({ name: 'taken_by_execution', type: 'int', nullable: true })
  takenByExecution: number | null;
}
