import { toRfc3339 } from '../../../common/time';
import type { DefinitionSourceDto, FactoryDto } from './dto/factory.dto';
import type { StoredMcpServerConfig } from '../../run-config';
import { maskMcpServers } from '../../secrets';
import type { Factory } from './entities/factory.entity';

/** The Oz `Factory` shape, plus Ambient's `definition_source`. */
export function toFactoryDto(factory: Factory): FactoryDto {
  const settings = (factory.settings ?? {}) as Record<string, unknown>;
  const defaults = (settings.agentDefaults ?? {}) as Record<string, unknown>;
  const harness = defaults.harness as { type?: string; model?: string } | undefined;
  const repositories = Array.isArray(settings.repositories) ? settings.repositories : [];
  return {
    uid: factory.id,
    name: factory.name,
    alias: typeof settings.alias === 'string' ? settings.alias : null,
    avatar_url: null,
    description: factory.description,
    team_uid: factory.teamId,
    created_at: toRfc3339(factory.createdAt)!,
    updated_at: toRfc3339(factory.updatedAt)!,
    code_forge: 'NONE',
    code_forges: [],
    credential_strategy: settings.credentialStrategy === 'CREATOR' ? 'CREATOR' : 'EXECUTOR',
    default_environment: typeof defaults.environmentId === 'string' ? defaults.environmentId : null,
    default_model: (typeof defaults.model === 'string' ? defaults.model : harness?.model) ?? null,
    integrations: Array.isArray(settings.integrations)
      ? (settings.integrations as Record<string, unknown>[])
      : null,
    repositories: repositories
      .filter((r): r is { owner: string; name: string } => typeof r === 'object' && r !== null)
      .map((r) => ({ owner: String(r.owner), repo: String(r.name) })),
    agent_defaults: {
      default_runner_uid: typeof defaults.runner === 'string' ? defaults.runner : '',
      mcp_servers: maskMcpServers(
        (defaults.mcpServers ?? {}) as Record<string, StoredMcpServerConfig>,
      ),
      secrets: Array.isArray(defaults.secrets) ? defaults.secrets.map((name) => ({ name })) : [],
      worker_host: typeof defaults.workerHost === 'string' ? defaults.workerHost : '',
      ...(harness ? { harness: { type: harness.type, model_id: harness.model } } : {}),
    },
    scorer_defaults: {},
    scoring: { default_model: null },
    ...(factory.createdBy ? { creator: { uid: factory.createdBy } } : {}),
    definition_source: sourceOf(factory),
  };
}

function sourceOf(factory: Factory): DefinitionSourceDto {
  return {
    kind: factory.source,
    repository_url: factory.repositoryUrl,
    branch: factory.repositoryBranch,
    path: factory.repositoryPath,
    credentials_secret: factory.repositoryCredentialsSecret,
    applied_commit: factory.appliedCommit,
    applied_at: toRfc3339(factory.appliedAt),
    last_sync: (factory.lastSync as unknown as Record<string, unknown>) ?? null,
  };
}
