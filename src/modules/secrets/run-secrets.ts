import type { AgentConfig, StoredMcpServerConfig } from '../run-config';
import { isSecretReference, mapMcpValues } from './mcp-secret-values';
import type { SecretRunContext } from './secret-scope';
import type { SecretRef, TeamSecretsService } from './team-secrets.service';

/**
 * Every team secret a run's config names, with the field naming it: `config.secrets`, the
 * harness credentials and the MCP `{"secret": NAME}` references.
 */
export function runSecretRefs(
  config: Pick<AgentConfig, 'secrets' | 'harness_auth_secrets' | 'mcp_servers'>,
): SecretRef[] {
  const refs: SecretRef[] = [];
  for (const [i, entry] of (config.secrets ?? []).entries()) {
    if (typeof entry?.name === 'string')
      refs.push({ name: entry.name, field: `config.secrets.${i}.name` });
  }
  for (const [key, name] of Object.entries(config.harness_auth_secrets ?? {})) {
    if (typeof name === 'string' && name !== '') {
      refs.push({ name, field: `config.harness_auth_secrets.${key}` });
    }
  }
  if (config.mcp_servers) {
    mapMcpValues(config.mcp_servers as Record<string, StoredMcpServerConfig>, (value, at) => {
      if (isSecretReference(value)) {
        refs.push({
          name: value.secret,
          field: `config.mcp_servers.${at.server}.${at.map}.${at.key}.secret`,
        });
      }
      return value;
    });
  }
  return refs;
}

/** What of a run decides which scoped secrets it may have. */
export function secretRunContextOf(run: {
  environmentId: string | null;
  executorId: string | null;
  scheduleId: string | null;
}): SecretRunContext {
  return {
    environmentId: run.environmentId,
    executorId: run.executorId,
    scheduleId: run.scheduleId,
  };
}

/**
 * The values of the team secrets named in `config.harness_auth_secrets`, by secret name; one the
 * run may not have (out of its scope, a webhook's) is left out like a missing one.
 */
export async function harnessAuthSecretValues(
  secrets: TeamSecretsService,
  run: Parameters<typeof secretRunContextOf>[0] & {
    teamId: string;
    config: Pick<AgentConfig, 'harness_auth_secrets'>;
  },
): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  if (!secrets.cipher.enabled) return values;
  const names = Object.values(run.config.harness_auth_secrets ?? {}).filter(
    (name): name is string => typeof name === 'string' && name !== '',
  );
  for (const name of new Set(names)) {
    const value = await secrets.revealForRun(run.teamId, name, secretRunContextOf(run));
    if (value !== null) values[name] = value;
  }
  return values;
}
