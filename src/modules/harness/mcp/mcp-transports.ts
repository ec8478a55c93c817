import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  DEFAULT_INHERITED_ENV_VARS,
  StdioClientTransport,
} from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpServerConfig } from '../../runs/run.types';

/** How much of a stdio server's stderr is kept to explain a failed start. */
const STDERR_TAIL_CHARS = 2000;

export interface ConnectOptions {
  workspaceDir: string;
  /** PATH for stdio servers; nothing else of any environment but the entry's own `env`. */
  path: string | undefined;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface ConnectedServer {
  client: Client;
  /** The last lines a stdio server wrote to stderr. */
  stderrTail(): string;
}

const clientInfo = { name: 'ambient-oz-harness', version: '1.0.0' };

/** Connects to one `mcp_servers` entry (stdio `command`, or `url` with SSE fallback). */
export async function connectMcpServer(
  config: McpServerConfig,
  options: ConnectOptions,
): Promise<ConnectedServer> {
  const requestOptions = { timeout: options.timeoutMs, signal: options.signal };
  if (config.command !== undefined) {
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      env: stdioEnvironment(config, options.path),
      cwd: options.workspaceDir,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    const client = new Client(clientInfo);
    try {
      await client.connect(transport, requestOptions);
    } catch (err) {
      await client.close().catch(() => undefined);
      const tail = stderr.trim();
      const message = err instanceof Error ? err.message : String(err);
      throw new Error(tail ? `${message}; stderr: ${tail}` : message);
    }
    return { client, stderrTail: () => stderr.trim() };
  }

  const url = new URL(config.url ?? '');
  const requestInit = { headers: config.headers ?? {} };
  const streamable = new Client(clientInfo);
  try {
    await streamable.connect(
      new StreamableHTTPClientTransport(url, { requestInit }),
      requestOptions,
    );
    return { client: streamable, stderrTail: () => '' };
  } catch (streamableError) {
    await streamable.close().catch(() => undefined);
    if (options.signal.aborted) throw streamableError;
    // Servers of the older HTTP+SSE protocol reject the streamable handshake; try that next.
    const sse = new Client(clientInfo);
    try {
      await sse.connect(new SSEClientTransport(url, { requestInit }), requestOptions);
      return { client: sse, stderrTail: () => '' };
    } catch {
      await sse.close().catch(() => undefined);
      throw streamableError;
    }
  }
}

/**
 * The SDK adds HOME, USER, SHELL … of this process to a stdio server's environment; an
 * undefined value makes Node leave a variable out, so only PATH and the entry's env remain.
 */
function stdioEnvironment(
  config: McpServerConfig,
  path: string | undefined,
): Record<string, string> {
  const env: Record<string, string | undefined> = {};
  for (const name of DEFAULT_INHERITED_ENV_VARS) env[name] = undefined;
  if (path !== undefined) env.PATH = path;
  Object.assign(env, config.env ?? {});
  return env as Record<string, string>;
}
