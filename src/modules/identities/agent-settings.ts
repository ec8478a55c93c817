import type { JsonObject } from '../../common/json';
import type { AgentConfig, ApprovalRule, SecretRef, StoredMcpServerConfig } from '../run-config';

export const AGENT_TYPES = [
  'FOREMAN',
  'TRIAGE',
  'SPEC',
  'IMPLEMENT',
  'REVIEW',
  'VERIFY',
  'CUSTOM',
] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

export interface MemoryStoreRef {
  uid: string;
  access: string;
  instructions: string;
}

/**
 * Everything an agent identity carries besides its name, stored as one JSON document. Unset
 * fields are absent; the response mapper fills in the defaults the Oz AgentResponse requires.
 */
export interface AgentSettings {
  description?: string;
  prompt?: string;
  agent_type?: AgentType;
  base_harness?: string;
  base_model?: string;
  credential_strategy?: 'CREATOR' | 'EXECUTOR';
  default_runner_uid?: string;
  environment_id?: string;
  harness?: AgentConfig['harness'];
  harness_auth_secrets?: AgentConfig['harness_auth_secrets'];
  inference_providers?: JsonObject;
  mcp_servers?: Record<string, StoredMcpServerConfig>;
  memory?: { attached_stores: MemoryStoreRef[]; auto_memory: { enabled: boolean } };
  on_behalf_of_enabled?: boolean;
  secrets?: SecretRef[];
  skills?: string[];
  worker_host?: string;
  /** Approval rules of every run it executes (normalised). */
  approvals?: ApprovalRule[];
  /** Who may decide its runs' approval requests besides admins (user ids, lower-case e-mails). */
  approvers?: string[];
}

/** The settings fields a create or update body may carry (the DTOs share this shape). */
export interface AgentSettingsInput {
  description?: string | null;
  prompt?: string | null;
  agent_type?: AgentType | null;
  base_harness?: string | null;
  base_model?: string | null;
  credential_strategy?: 'CREATOR' | 'EXECUTOR' | null;
  default_runner_uid?: string | null;
  environment_id?: string | null;
  harness?: AgentConfig['harness'] | null;
  harness_auth_secrets?: AgentConfig['harness_auth_secrets'] | null;
  inference_providers?: JsonObject | null;
  mcp_servers?: Record<string, StoredMcpServerConfig> | null;
  memory?: {
    attached_stores?: MemoryStoreRef[] | null;
    auto_memory?: { enabled?: boolean | null } | null;
  } | null;
  on_behalf_of_enabled?: boolean | null;
  secrets?: SecretRef[] | null;
  skills?: string[] | null;
  worker_host?: string | null;
  approvals?: ApprovalRule[] | null;
  approvers?: string[] | null;
}

type PlainKey = Exclude<keyof AgentSettings, 'memory'>;
const PLAIN_KEYS: PlainKey[] = [
  'description',
  'prompt',
  'agent_type',
  'base_harness',
  'base_model',
  'credential_strategy',
  'default_runner_uid',
  'environment_id',
  'harness',
  'harness_auth_secrets',
  'inference_providers',
  'mcp_servers',
  'on_behalf_of_enabled',
  'secrets',
  'skills',
  'worker_host',
  'approvals',
  'approvers',
];

/** An empty string, array or object: the update convention for "clear this field". */
function isEmptyValue(value: unknown): boolean {
  if (value === '' || (Array.isArray(value) && value.length === 0)) return true;
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

/**
 * Applies a create or update body to stored settings with the Oz partial-update rules: an
 * omitted or null field stays as it is, an empty value clears it, anything else replaces it.
 * A create is the same operation on empty settings.
 */
export function applySettings(current: AgentSettings, input: AgentSettingsInput): AgentSettings {
  const next: AgentSettings = { ...current };
  const writable = next as Record<PlainKey, unknown>;
  for (const key of PLAIN_KEYS) {
    const value = (input as Record<string, unknown>)[key];
    if (value === undefined || value === null) continue;
    if (isEmptyValue(value) || (key === 'on_behalf_of_enabled' && value === false)) {
      delete writable[key];
    } else {
      writable[key] = value;
    }
  }
  if (input.memory) {
    const memory = next.memory ?? { attached_stores: [], auto_memory: { enabled: true } };
    const stores = input.memory.attached_stores;
    const enabled = input.memory.auto_memory?.enabled;
    next.memory = {
      attached_stores: stores === undefined || stores === null ? memory.attached_stores : stores,
      auto_memory: { enabled: enabled ?? memory.auto_memory.enabled },
    };
  }
  return next;
}

/** Names that occur more than once in a list of secret references. */
export function duplicateSecretNames(secrets: { name: string }[]): string[] {
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const { name } of secrets) {
    if (seen.has(name)) duplicates.add(name);
    seen.add(name);
  }
  return [...duplicates];
}
