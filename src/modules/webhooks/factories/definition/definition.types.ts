import type { PayloadFilter } from '../../filter/payload-filter';
import type { SignatureScheme } from '../../verifiers';
import type { SourcePosition } from './diagnostics';
import type { ExecutionSettings } from './execution-settings';

import { AUTH_MODES, type AuthMode } from '../../auth-modes';

export { AUTH_MODES, type AuthMode };

export interface DefinitionFile {
  path: string;
  content: string;
}

export interface FactorySettings {
  name: string;
  description: string | null;
  agentDefaults: ExecutionSettings;
  /** factory.yaml as written (kept for GET /factory/{uid}). */
  raw: Record<string, unknown>;
}

export interface WebhookSpec {
  name: string;
  path: string;
  authMode: AuthMode;
  signatureScheme: SignatureScheme | null;
  secretName: string;
  deliveryIdHeader: string | null;
  enabled: boolean;
  positions: { secretName: SourcePosition; file: SourcePosition };
}

export interface WebhookTriggerSpec {
  webhookIds: string[];
  payload: PayloadFilter | null;
  positions: { webhookIds: SourcePosition[] };
}

export interface AutomationSpec {
  name: string;
  path: string;
  enabled: boolean;
  agent: string | null;
  triggers: WebhookTriggerSpec[];
  execution: ExecutionSettings;
  prompt: string;
  positions: { agent: SourcePosition; model: SourcePosition };
}

export const AGENT_TYPES = [
  'CUSTOM',
  'FOREMAN',
  'MAIN',
  'TRIAGE',
  'SPEC',
  'IMPLEMENT',
  'REVIEW',
  'VERIFY',
] as const;

export interface AgentSpec {
  name: string;
  path: string;
  agentType: (typeof AGENT_TYPES)[number];
  description: string | null;
  execution: ExecutionSettings;
  prompt: string;
  positions: { model: SourcePosition };
}

export interface ParsedDefinition {
  factory: FactorySettings;
  webhooks: WebhookSpec[];
  automations: AutomationSpec[];
  agents: AgentSpec[];
  /** Every file given, recognised ones included, to store as the applied definition. */
  files: DefinitionFile[];
}

/**
 * The part of a definition the state checks can judge: the specs of the files that have no
 * problem of their own, and the name of every webhook file given (so a broken file is not taken
 * for a removed webhook).
 */
export interface CheckableDefinition {
  factory: FactorySettings | null;
  webhooks: WebhookSpec[];
  automations: AutomationSpec[];
  agents: AgentSpec[];
  webhookFiles: { name: string; path: string }[];
}
