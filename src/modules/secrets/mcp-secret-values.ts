import type {
  McpSecretReference,
  McpSecretValue,
  SealedMcpValue,
  StoredMcpServerConfig,
} from '../run-config';

/** What an API response shows in place of a literal MCP `env`/`headers` value. */
export const MASKED_VALUE = '***';

/** The keys of an `mcp_servers` entry whose values are secrets. */
export const MCP_SECRET_MAPS = ['env', 'headers'] as const;

export function isSecretReference(value: unknown): value is McpSecretReference {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.keys(value).length === 1 &&
    typeof (value as McpSecretReference).secret === 'string'
  );
}

export function isSealedValue(value: unknown): value is SealedMcpValue {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.keys(value).length === 1 &&
    typeof (value as SealedMcpValue).ciphertext === 'string'
  );
}

/**
 * How a value is shown: `***` for a literal, `<secret:NAME>` for a team secret reference. Both
 * are strings, so a response still matches the Oz `MCPServerConfig` (`{string: string}`), and
 * sending a response back unchanged keeps the stored values (see McpSecrets.seal).
 */
export function maskedValue(value: McpSecretValue): string {
  return isSecretReference(value) ? `<secret:${value.secret}>` : MASKED_VALUE;
}

/** `servers` with every `env`/`headers` value masked: for API responses, events and logs. */
export function maskMcpServers(
  servers: Record<string, StoredMcpServerConfig>,
): Record<string, StoredMcpServerConfig> {
  return mapMcpValues(servers, (value) => maskedValue(value));
}

/** A config (run, schedule, identity settings) with its `mcp_servers` masked. */
export function withMaskedMcpServers<T extends { mcp_servers?: Record<string, unknown> | null }>(
  config: T,
): T {
  if (!config.mcp_servers || typeof config.mcp_servers !== 'object') return config;
  return {
    ...config,
    mcp_servers: maskMcpServers(config.mcp_servers as Record<string, StoredMcpServerConfig>),
  };
}

/** A copy of `servers` with every `env`/`headers` value replaced by `map(value, server, key)`. */
export function mapMcpValues<V>(
  servers: Record<string, StoredMcpServerConfig>,
  map: (value: McpSecretValue, where: { server: string; map: 'env' | 'headers'; key: string }) => V,
): Record<string, StoredMcpServerConfig> {
  const out: Record<string, StoredMcpServerConfig> = {};
  for (const [name, server] of Object.entries(servers)) {
    if (!server || typeof server !== 'object') {
      out[name] = server;
      continue;
    }
    const copy: Record<string, unknown> = { ...server };
    for (const mapKey of MCP_SECRET_MAPS) {
      const values = server[mapKey];
      if (!values || typeof values !== 'object') continue;
      copy[mapKey] = Object.fromEntries(
        Object.entries(values).map(([key, value]) => [
          key,
          map(value, { server: name, map: mapKey, key }),
        ]),
      );
    }
    out[name] = copy as StoredMcpServerConfig;
  }
  return out;
}
