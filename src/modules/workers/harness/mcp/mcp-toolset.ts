import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { ErrorCode } from '../../../../common/errors/error-codes';
import type { McpServerConfig } from '../../../run-config';
import type { ConnectOptions } from './mcp-transports';
import { mcpToolName } from './mcp-tool-names';

/** A tool result longer than this keeps its head and tail. */
const MAX_RESULT_CHARS = 16 * 1024;

/** An `mcp_servers` entry that could not be used; the run fails with `code`. */
export class McpSetupError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Ambient runs `command` and `url` servers; a `warp_id` names a server only Warp can provide. */
export function assertSupportedMcpServers(servers: Record<string, McpServerConfig>): void {
  const unsupported = Object.entries(servers).find(([, config]) => config.warp_id !== undefined);
  if (unsupported) {
    throw new McpSetupError(
      'operation_not_supported',
      `MCP server "${unsupported[0]}" uses warp_id, which Ambient does not support; ` +
        'configure it with command or url',
    );
  }
}

interface OfferedTool {
  definition: ChatCompletionFunctionTool;
  client: Client;
  server: string;
  tool: string;
}

/** The tools of every MCP server of a run, connected for one execution. */
export class McpToolset {
  private constructor(
    private readonly clients: Client[],
    private readonly offered: Map<string, OfferedTool>,
  ) {}

  static empty(): McpToolset {
    return new McpToolset([], new Map());
  }

  /**
   * Connects every server and lists its tools. Any failure closes what was connected and
   * throws McpSetupError naming the server.
   */
  static async connect(
    servers: Record<string, McpServerConfig>,
    options: ConnectOptions,
  ): Promise<McpToolset> {
    assertSupportedMcpServers(servers);
    const toolset = new McpToolset([], new Map());
    try {
      for (const [server, config] of Object.entries(servers)) {
        await toolset.add(server, config, options);
      }
    } catch (err) {
      await toolset.close();
      throw err;
    }
    return toolset;
  }

  definitions(): ChatCompletionFunctionTool[] {
    return [...this.offered.values()].map((tool) => tool.definition);
  }

  has(name: string): boolean {
    return this.offered.has(name);
  }

  /** The server and the tool's own name behind an offered name (what approval rules name). */
  origin(name: string): { server: string; tool: string } | undefined {
    const offered = this.offered.get(name);
    return offered && { server: offered.server, tool: offered.tool };
  }

  /** Calls a tool and renders its result as text; protocol errors become an error text too. */
  async call(
    name: string,
    args: Record<string, unknown>,
    options: { timeoutMs: number; signal: AbortSignal },
  ): Promise<string> {
    const offered = this.offered.get(name);
    if (!offered) return `Error: unknown MCP tool "${name}".`;
    // The SDK never removes its listener from a request's signal, so each call gets its own.
    const callSignal = new AbortController();
    const abort = (): void => callSignal.abort(options.signal.reason);
    options.signal.addEventListener('abort', abort, { once: true });
    if (options.signal.aborted) abort();
    try {
      const result = await offered.client.callTool(
        { name: offered.tool, arguments: args },
        undefined,
        { timeout: options.timeoutMs, signal: callSignal.signal },
      );
      const text = renderContent(result.content, result.structuredContent);
      return cap(result.isError ? `Error: ${text}` : text);
    } catch (err) {
      return `Error: MCP server "${offered.server}" failed to run ${offered.tool}: ${errText(err)}`;
    } finally {
      options.signal.removeEventListener('abort', abort);
    }
  }

  async close(): Promise<void> {
    const clients = this.clients.splice(0);
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  }

  private async add(server: string, config: McpServerConfig, options: ConnectOptions) {
    // The MCP SDK (≈ 170 modules with zod) loads with the first run that has MCP servers.
    const { connectMcpServer } = await import('./mcp-transports');
    const { displayUrl, remoteFailure } = await import('./mcp-remote-errors');
    const remote = config.command === undefined;
    const what = remote ? displayUrl(config.url) : `command "${config.command}"`;
    // A url server's errors quote what it sent back: only their kind is reported.
    const why = (err: unknown) => (remote ? remoteFailure(err) : errText(err));
    let connected;
    try {
      connected = await connectMcpServer(config, options);
    } catch (err) {
      throw new McpSetupError('environment_setup_failed', failure(server, what, why(err)));
    }
    this.clients.push(connected.client);
    try {
      const taken = new Set(this.offered.keys());
      let cursor: string | undefined;
      do {
        const page = await connected.client.listTools(cursor ? { cursor } : undefined, {
          timeout: options.timeoutMs,
          signal: options.signal,
        });
        for (const tool of page.tools) {
          const name = mcpToolName(server, tool.name, taken);
          taken.add(name);
          const description = `[MCP server ${server}] ${tool.description ?? tool.name}`;
          this.offered.set(name, {
            definition: {
              type: 'function',
              function: { name, description, parameters: tool.inputSchema },
            },
            client: connected.client,
            server,
            tool: tool.name,
          });
        }
        cursor = page.nextCursor;
      } while (cursor);
    } catch (err) {
      const stderr = connected.stderrTail();
      throw new McpSetupError(
        'environment_setup_failed',
        failure(server, what, why(err)) + (stderr ? `; stderr: ${stderr}` : ''),
      );
    }
  }
}

function failure(server: string, what: string, why: string): string {
  return `MCP server "${server}" (${what}) failed to start: ${why}`;
}

function renderContent(content: unknown, structured: unknown): string {
  const parts = (Array.isArray(content) ? content : []).map((part: Record<string, unknown>) => {
    if (part.type === 'text') return String(part.text);
    if (part.type === 'image' || part.type === 'audio') return `[${part.type} ${part.mimeType}]`;
    if (part.type === 'resource_link') return `[resource ${part.uri}]`;
    if (part.type === 'resource') {
      const resource = part.resource as Record<string, unknown>;
      return typeof resource.text === 'string' ? resource.text : `[resource ${resource.uri}]`;
    }
    return JSON.stringify(part);
  });
  if (parts.length === 0 && structured !== undefined) return JSON.stringify(structured);
  return parts.join('\n');
}

function cap(text: string): string {
  if (text.length <= MAX_RESULT_CHARS) return text;
  const half = MAX_RESULT_CHARS / 2;
  return `${text.slice(0, half)}\n… ${text.length - MAX_RESULT_CHARS} characters omitted …\n${text.slice(-half)}`;
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
