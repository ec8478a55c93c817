import { maskMcpServers } from '../secrets';
import type { ApiKey } from '../teams';
import type { JsonObject } from '../../common/json';
import type { AgentIdentity } from './agent-identity.entity';
import type { AgentResponseDto, IdentityApiKeyDto } from './dto/agent-response.dto';

/**
 * The Oz AgentResponse: every field the SDKs require is always sent (`default_runner_uid` is ""
 * when unset, `memory`, `secrets` and `skills` are empty rather than missing).
 */
export function toAgentResponse(identity: AgentIdentity, available: boolean): AgentResponseDto {
  const s = identity.settings;
  const response: AgentResponseDto = {
    uid: identity.uid,
    name: identity.name,
    description: s.description ?? null,
    available,
    created_at: identity.createdAt.toISOString(),
    updated_at: identity.updatedAt.toISOString(),
    default_runner_uid: s.default_runner_uid ?? '',
    memory: {
      attached_stores: s.memory?.attached_stores ?? [],
      auto_memory: { enabled: s.memory?.auto_memory.enabled ?? true },
    },
    secrets: s.secrets ?? [],
    skills: s.skills ?? [],
    prompt: s.prompt ?? null,
    factory_uid: identity.factoryUid,
    on_behalf_of_enabled: s.on_behalf_of_enabled ?? false,
  };
  const optional = [
    'agent_type',
    'base_harness',
    'base_model',
    'credential_strategy',
    'environment_id',
    'harness',
    'harness_auth_secrets',
    'inference_providers',
    'mcp_servers',
    'worker_host',
    'approvals',
    'approvers',
  ] as const;
  for (const key of optional) {
    if (s[key] !== undefined) (response as unknown as Record<string, unknown>)[key] = s[key];
  }
  if (s.mcp_servers) response.mcp_servers = maskMcpServers(s.mcp_servers) as JsonObject;
  return response;
}

export function toIdentityApiKey(key: ApiKey): IdentityApiKeyDto {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}
