import type { StoredMcpServerConfig } from '../run-config';

/**
 * Where an MCP server's `env`/`headers` values go: the origin of its `url` (scheme, host, port),
 * or, for a server Ambient starts, its `command` and `args` (the program given the variables).
 * A stored credential is bound to this: sent back masked, it is kept only for the same one.
 */
export function mcpDestination(server: StoredMcpServerConfig | undefined): string | null {
  if (!server || typeof server !== 'object') return null;
  if (typeof server.url === 'string') {
    try {
      return `url ${new URL(server.url).origin}`;
    } catch {
      return `url ${server.url}`;
    }
  }
  if (typeof server.command === 'string') {
    return `command ${JSON.stringify([server.command, ...(server.args ?? [])])}`;
  }
  return server.warp_id ? `warp_id ${server.warp_id}` : null;
}

/** How a refusal names the change: "url https://a → url https://b" (no credential in it). */
export function describeMove(before: string | null, after: string | null): string {
  return `${before ?? 'none'} → ${after ?? 'none'}`;
}
