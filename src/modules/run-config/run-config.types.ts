import type { ErrorCode } from '../../common/errors/error-codes';
import type { JsonObject } from '../../common/json';
import type { ApprovalRule } from './approval-rules';

/** The Oz AgentConfigSnapshot (`config` on create, `agent_config` on RunItem). */
export interface AgentConfig {
  name?: string;
  model_id?: string;
  base_prompt?: string;
  environment_id?: string;
  skill_spec?: string;
  skills?: string[];
  mcp_servers?: Record<string, StoredMcpServerConfig>;
  computer_use_enabled?: boolean;
  computer_use_model_id?: string;
  credential_strategy?: 'CREATOR' | 'EXECUTOR' | null;
  idle_timeout_minutes?: number;
  worker_host?: string;
  harness?: {
    /** A registered harness type (HarnessRegistry). */
    type?: string;
    model_id?: string;
    reasoning_level?: string;
  };
  harness_auth_secrets?: {
    claude_auth_secret_name?: string;
    codex_auth_secret_name?: string;
    /** Ambient extension (the Oz schema has no Gemini field yet). */
    gemini_auth_secret_name?: string;
  };
  inference_providers?: JsonObject;
  memory_stores?: { uid: string; access: string; instructions: string }[];
  runner_id?: string;
  secrets?: SecretRef[];
  session_sharing?: { public_access?: 'VIEWER' | 'EDITOR' };
  experimental?: Record<string, string | number | boolean | null>;
  /** Ambient extension: approval rules added to the environment's and the agent identity's. */
  approvals?: ApprovalRule[];
}

/**
 * A team secret given to a run by name; with `inject_hosts`, bound to those hosts: the sandbox
 * sees a placeholder and the egress proxy substitutes the value in requests to them only.
 */
export interface SecretRef {
  name: string;
  inject_hosts?: string[];
}

/** An `mcp_servers` entry with the real `env` and `headers` values: what a harness connects with. */
export interface McpServerConfig {
  warp_id?: string;
  command?: string;
  args?: string[];
  url?: string;
  env?: Record<string, string>;
  headers?: Record<string, string>;
}

/** A team secret named in place of an MCP `env`/`headers` value (resolved at execution time). */
export interface McpSecretReference {
  secret: string;
}

/** A literal MCP `env`/`headers` value as stored: SecretCipher output, base64 (see McpSecrets). */
export interface SealedMcpValue {
  ciphertext: string;
}

/**
 * An MCP `env`/`headers` value: a literal (API input only; stored sealed), a team secret
 * reference, or a sealed literal.
 */
export type McpSecretValue = string | McpSecretReference | SealedMcpValue;

/** An `mcp_servers` entry as runs, schedules and agent identities store it. */
export interface StoredMcpServerConfig extends Omit<McpServerConfig, 'env' | 'headers'> {
  env?: Record<string, McpSecretValue>;
  headers?: Record<string, McpSecretValue>;
}

/** A run's config as a harness sees it: MCP values revealed, in memory only. */
export type ExecutionConfig = Omit<AgentConfig, 'mcp_servers'> & {
  mcp_servers?: Record<string, McpServerConfig>;
};

export interface StatusMessage {
  message: string;
  error_code?: ErrorCode;
  retryable?: boolean;
  session_debug_until?: string;
  debug_agent_active?: boolean;
  /** BLOCKED: the request (`run_approvals.id`) the run waits on. */
  pending_approval_id?: string;
}

/** The Oz `AgentSkill` of a run whose skill resolved to a SKILL.md: its front matter and path. */
export interface ResolvedAgentSkill {
  name: string;
  description: string;
  /** Canonical `owner/repo:path/to/SKILL.md`. */
  full_path: string;
}

export interface RequestUsage {
  inference_cost?: number;
  compute_cost?: number;
  inference_cost_usd?: number;
  compute_cost_usd?: number;
  total_tokens?: number;
  model_token_usage?: {
    model_id: string;
    total_tokens: number;
    usage_type: 'warp' | 'byok' | 'custom_endpoint';
    tokens_by_category?: Record<string, number>;
  }[];
}

export interface ScheduleInfo {
  schedule_id: string;
  schedule_name: string;
  cron_schedule: string;
}
