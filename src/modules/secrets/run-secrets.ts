import type { AgentConfig } from '../run-config';
import type { TeamSecretsService } from './team-secrets.service';

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
