import type { ErrorCode } from '../../../common/errors/error-codes';
import type { CatalogModel } from '../../models';
import type { ApprovalRule, ExecutionConfig } from '../../run-config';
import type { ApprovalDecision, ApprovalKind } from '../../runs';
import type { Sandbox } from '../sandbox/sandbox.types';
import type { HoldEvents } from './execution-timeline';

import type { ChatMessage } from '../../runs';

export type { ChatMessage };

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  modelCalls: number;
}

/** Everything a harness needs to execute one execution of a run. */
export interface HarnessContext {
  runId: string;
  executionId: number;
  teamId: string;
  model: CatalogModel;
  /** The run's config with MCP `env`/`headers` values revealed (in memory only). */
  config: ExecutionConfig;
  mode: string;
  /** Messages of earlier executions of this run (continuation after a follow-up). */
  history: ChatMessage[];
  /** New user turns for this execution: the prompt first time, follow-up messages afterwards. */
  userMessages: string[];
  /** The run's private working directory on this host (the file tools work here). */
  workspaceDir: string;
  /** Where every program of the execution runs; the workspace is at `sandbox.workdir` inside. */
  sandbox: Sandbox;
  /** Environment for commands the agent runs: nothing of the server's own environment leaks. */
  commandEnv: Record<string, string>;
  limits: { maxTurns: number; deadline: number; commandTimeoutSeconds: number };
  /** Aborted when the run is cancelled or the worker shuts down. */
  signal: AbortSignal;
  /**
   * Asked before each model call with this execution's usage so far: why the call may not be
   * made (a cost limit or budget is reached), or null. Absent: no limits are checked.
   */
  budgetRefusal?(usage: TokenUsage): Promise<string | null>;
  /** Follow-ups sent while the run is live, not yet delivered; marks them delivered. */
  takeFollowups(): Promise<string[]>;
  /** Persists one message of the conversation as the loop produces it. */
  recordMessage(message: ChatMessage): Promise<void>;
  /** Appends a timeline event to the run. */
  emitEvent(eventType: string, payload?: Record<string, unknown>): Promise<void>;
  /**
   * Holds the execution's timeline events (emitted here or by the sandbox: an egress refusal, a
   * limit) to write them together, in order (ExecutionTimeline). Absent: each as it comes.
   */
  holdEvents?: HoldEvents;
  /**
   * The value of a secret of the run's team (vendor CLI credentials named in
   * `harness_auth_secrets`); null when there is none.
   */
  teamSecret(name: string): Promise<string | null>;
  /**
   * Records an artifact (fields as in POST /harness-support/artifacts); throws ApiError for an
   * invalid report. Absent when the execution cannot report artifacts.
   */
  reportArtifact?(report: Record<string, unknown>): Promise<{ artifactUid: string }>;
  /**
   * The run's approval policy and the decisions people made on its requests. Absent: every call
   * is allowed and the harness cannot block (harnesses that cannot map their prompts).
   */
  approvals?: ApprovalGate;
}

/** What a blocked execution asks a person: written with the run's move to BLOCKED. */
export interface ApprovalRequestDraft {
  /**
   * Set when the execution blocks again on a request an earlier execution wrote and nobody has
   * decided yet: the run waits on that request, and no new one is written.
   */
  existingId?: string;
  kind: ApprovalKind;
  /** The tool the model called (`run_command`, `mcp__github__create_pr`, `ask_user`), or `egress`. */
  tool: string;
  /** The model's id of the call that waits; the resumed execution answers it. */
  toolCallId: string | null;
  arguments: Record<string, unknown>;
  /** The rule that asked; null for a question. */
  rule: ApprovalRule | null;
  /** The pending action in words: the run's status message names it. */
  summary: string;
}

/** A request of an earlier execution of the run, with its decision if a person made one. */
export interface RecordedApproval {
  id: string;
  kind: ApprovalKind;
  tool: string;
  toolCallId: string | null;
  arguments: Record<string, unknown>;
  rule: ApprovalRule | null;
  summary: string;
  decision: ApprovalDecision | null;
  /** Why it was denied, or the answer to a question. */
  comment: string | null;
  /** Who decided, as people read it. */
  decidedBy: string | null;
}

export interface ApprovalGate {
  /** The environment's, the agent identity's and the run's rules together. */
  readonly rules: readonly ApprovalRule[];
  /** Requests of earlier executions that no execution has taken yet, oldest first. */
  untaken(): Promise<RecordedApproval[]>;
  /**
   * Takes a decided request for this execution, fenced: true once, false when an earlier
   * execution took it (an approved call it may have started is never run twice).
   */
  take(id: string): Promise<boolean>;
  /**
   * Hosts outside the environment's allowlist that the sandbox's egress proxy refused since the
   * last call, without those a person already denied for this run. Absent: the execution has no
   * allowlist proxy (nothing to ask about).
   */
  unlistedEgress?(): EgressTarget[];
}

/** A host and port the sandbox's programs tried to reach. */
export interface EgressTarget {
  host: string;
  port: number;
}

export interface HarnessResult {
  outcome: 'succeeded' | 'failed' | 'cancelled' | 'blocked';
  /** Final answer on success; the reason otherwise. Becomes status_message.message. */
  summary: string;
  /** `blocked`: what the execution waits for; recorded with the run's move to BLOCKED. */
  pending?: ApprovalRequestDraft;
  errorCode?: ErrorCode;
  usage: TokenUsage;
  /**
   * The harness's own raw event stream (JSONL), kept as this execution's transcript instead of
   * the stored messages (vendor CLIs).
   */
  rawTranscript?: string;
}

/** One way of executing an agent (the built-in loop, a vendor CLI, a remote worker …). */
export interface Harness {
  readonly type: string;
  run(context: HarnessContext): Promise<HarnessResult>;
}
