import type { AgentConfig } from '../runs/run.types';
import type { TeamSecretsService } from './team-secrets.service';

/**
 * The team secrets a run lists in `config.secrets`, as environment variables named after each
 * secret. Only an explicit list is injected (no list, no secrets): the team's other secrets — git
 * tokens, harness credentials — reach a run only where Ambient itself uses them. Names with no
 * secret are skipped; nothing is injected while secrets are disabled on the server.
 */
export async function runSecretEnv(
  secrets: TeamSecretsService,
  teamId: string,
  config: Pick<AgentConfig, 'secrets'>,
): Promise<Record<string, string>> {
  return revealNamed(
    secrets,
    teamId,
    (config.secrets ?? []).map((s) => s.name),
  );
}

/** The values of the team secrets named in `config.harness_auth_secrets`, by secret name. */
export async function harnessAuthSecretValues(
  secrets: TeamSecretsService,
  teamId: string,
  config: Pick<AgentConfig, 'harness_auth_secrets'>,
): Promise<Record<string, string>> {
  const names = Object.values(config.harness_auth_secrets ?? {}).filter(
    (name): name is string => typeof name === 'string' && name !== '',
  );
  return revealNamed(secrets, teamId, names);
}

async function revealNamed(
  secrets: TeamSecretsService,
  teamId: string,
  names: string[],
): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  if (!secrets.cipher.enabled) return values;
  for (const name of new Set(names)) {
    const value = await secrets.reveal(teamId, name);
    if (value !== null) values[name] = value;
  }
  return values;
}
