import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { stringify as toToml } from 'smol-toml';
import type { McpServerConfig } from '../../../run-config';
import type { Sandbox } from '../../sandbox/sandbox.types';
import { assertSupportedMcpServers } from '../mcp/mcp-toolset';
import { writeTenantFile } from '../../../../common/tenant-files/tenant-file-writes';

/** How a vendor CLI is pointed at the run's MCP servers: extra arguments and variables. */
export interface VendorMcpSetup {
  args: string[];
  env: Record<string, string>;
}

export type McpServers = Record<string, McpServerConfig>;

/**
 * Writes a run's `mcp_servers` where a vendor CLI reads them, in the sandbox's private directory
 * outside the workspace (its env and headers may hold credentials, so they go neither on a command
 * line nor into the repository), and removes them when the execution ends.
 */
export class VendorMcpConfigDir {
  private constructor(
    private readonly sandbox: Sandbox,
    /** Where the files are on this side of the sandbox; null when there are no servers. */
    private readonly hostPath: string | null,
    /** The same directory as the CLI inside the sandbox sees it. */
    readonly path: string | null,
  ) {}

  static async create(servers: McpServers, sandbox: Sandbox): Promise<VendorMcpConfigDir> {
    assertSupportedMcpServers(servers);
    if (Object.keys(servers).length === 0) return new VendorMcpConfigDir(sandbox, null, null);
    const name = `mcp-${randomBytes(6).toString('hex')}`;
    const hostPath = join(sandbox.privateDir.host, name);
    await mkdir(hostPath, { mode: 0o700 });
    await sandbox.adopt(hostPath);
    return new VendorMcpConfigDir(sandbox, hostPath, posix.join(sandbox.privateDir.inside, name));
  }

  /** Writes `content` to `name` in the directory (owner-only) and returns its path inside. */
  async write(name: string, content: string): Promise<string> {
    // The directory is the sandbox's (adopted): write through no link it may have planted.
    await writeTenantFile(
      { root: this.hostPath!, label: 'sandbox directory' },
      name,
      content,
      0o600,
    );
    await this.sandbox.adopt(join(this.hostPath!, name));
    return posix.join(this.path!, name);
  }

  async remove(): Promise<void> {
    if (this.hostPath) await rm(this.hostPath, { recursive: true, force: true });
  }
}

/** Claude Code: `--mcp-config <file>` holding `{mcpServers: {name: stdio | http entry}}`. */
export async function claudeMcpSetup(
  servers: McpServers,
  dir: VendorMcpConfigDir,
): Promise<VendorMcpSetup> {
  const mcpServers = mapServers(servers, (server) =>
    server.command !== undefined
      ? { type: 'stdio', command: server.command, args: server.args ?? [], env: server.env ?? {} }
      : { type: 'http', url: server.url, headers: server.headers ?? {} },
  );
  const file = await dir.write('claude-mcp.json', JSON.stringify({ mcpServers }));
  return { args: ['--mcp-config', file], env: {} };
}

/** Codex: `[mcp_servers.<name>]` tables in `$CODEX_HOME/config.toml`. */
export async function codexMcpSetup(
  servers: McpServers,
  dir: VendorMcpConfigDir,
): Promise<VendorMcpSetup> {
  const mcpServers = mapServers(servers, (server) =>
    server.command !== undefined
      ? { command: server.command, args: server.args ?? [], env: server.env ?? {} }
      : { url: server.url, http_headers: server.headers ?? {} },
  );
  await dir.write('config.toml', toToml({ mcp_servers: mcpServers }));
  return { args: [], env: { CODEX_HOME: dir.path! } };
}

/**
 * Gemini CLI: `mcpServers` in a system settings file (GEMINI_CLI_SYSTEM_SETTINGS_PATH), which
 * outranks the workspace's own `.gemini/settings.json`; `httpUrl` is its streamable HTTP entry.
 */
export async function geminiMcpSetup(
  servers: McpServers,
  dir: VendorMcpConfigDir,
): Promise<VendorMcpSetup> {
  const mcpServers = mapServers(servers, (server) =>
    server.command !== undefined
      ? { command: server.command, args: server.args ?? [], env: server.env ?? {}, trust: true }
      : { httpUrl: server.url, headers: server.headers ?? {}, trust: true },
  );
  const file = await dir.write('gemini-settings.json', JSON.stringify({ mcpServers }));
  return { args: [], env: { GEMINI_CLI_SYSTEM_SETTINGS_PATH: file } };
}

function mapServers(
  servers: McpServers,
  entry: (server: McpServerConfig) => Record<string, unknown>,
): Record<string, Record<string, unknown>> {
  return Object.fromEntries(Object.entries(servers).map(([name, s]) => [name, entry(s)]));
}
