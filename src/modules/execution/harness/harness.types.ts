import type { ErrorCode } from '../../../common/errors/error-codes';
import type { CatalogModel } from '../../models';
import type { ExecutionConfig } from '../../run-config';
import type { Sandbox } from '../sandbox/sandbox.types';

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
   * The value of a secret of the run's team (vendor CLI credentials named in
   * `harness_auth_secrets`); null when there is none.
   */
  teamSecret(name: string): Promise<string | null>;
  /**
   * Records an artifact (fields as in POST /harness-support/artifacts); throws ApiError for an
   * invalid report. Absent when the execution cannot report artifacts.
   */
  reportArtifact?(report: Record<string, unknown>): Promise<{ artifactUid: string }>;
}

export interface HarnessResult {
  outcome: 'succeeded' | 'failed' | 'cancelled';
  /** Final answer on success; the reason otherwise. Becomes status_message.message. */
  summary: string;
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
