import type { AgentConfig } from '../../../run-config';

type AuthSecretField = keyof NonNullable<AgentConfig['harness_auth_secrets']>;

/**
 * Each vendor CLI's key: the `harness_auth_secrets` field naming its team secret, and the hosts
 * the CLI sends it to (its default API base URL's). In an `allowlist` environment the key is
 * bound to them: the CLI gets a placeholder the egress proxy replaces for those hosts only.
 */
export const VENDOR_PROVIDER_KEYS: Record<string, { field: AuthSecretField; hosts: string[] }> = {
  claude: { field: 'claude_auth_secret_name', hosts: ['api.anthropic.com'] },
  codex: { field: 'codex_auth_secret_name', hosts: ['api.openai.com'] },
  gemini: { field: 'gemini_auth_secret_name', hosts: ['generativelanguage.googleapis.com'] },
};

/** The team secret holding the run's vendor CLI key and its provider's hosts; null for none. */
export function vendorProviderKey(
  config: Pick<AgentConfig, 'harness' | 'harness_auth_secrets'>,
): { name: string; hosts: string[] } | null {
  const type = config.harness?.type;
  const key = type && Object.hasOwn(VENDOR_PROVIDER_KEYS, type) ? VENDOR_PROVIDER_KEYS[type] : null;
  const name = key ? config.harness_auth_secrets?.[key.field] : undefined;
  return key && name ? { name, hosts: [...key.hosts] } : null;
}
