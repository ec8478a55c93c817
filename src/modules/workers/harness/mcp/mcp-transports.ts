import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { EgressGuard } from '../../../../common/egress/egress-guard';
import { guardedFetch } from '../../../../common/egress/guarded-fetch';
import type { McpServerConfig } from '../../../run-config';
import type { Sandbox } from '../../sandbox/sandbox.types';
import { egressRefusal } from './mcp-remote-errors';
import { SandboxStdioTransport } from './sandbox-stdio-transport';

/** How much of a stdio server's stderr is kept to explain a failed start. */
const STDERR_TAIL_CHARS = 2000;

export interface ConnectOptions {
  /** Where stdio servers run (in its workspace). */
  sandbox: Sandbox;
  /** PATH for stdio servers; nothing else of any environment but the entry's own `env`. */
  path: string | undefined;
  /** The policy every connection to a `url` server goes through (it runs on this host). */
  egress: EgressGuard;
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
    const transport = new SandboxStdioTransport(options.sandbox, {
      command: config.command,
      args: config.args ?? [],
      env: stdioEnvironment(config, options.path),
    });
    let stderr = '';
    transport.onStderr((chunk: Buffer) => {
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
  // Redirects are left to the guarded fetch: it follows few, within the origin, each checked.
  const http = {
    requestInit: { headers: config.headers ?? {} },
    fetch: guardedFetch(options.egress),
    redirectPolicy: 'follow' as const,
  };
  const streamable = new Client(clientInfo);
  try {
    await streamable.connect(new StreamableHTTPClientTransport(url, http), requestOptions);
    return { client: streamable, stderrTail: () => '' };
  } catch (streamableError) {
    await streamable.close().catch(() => undefined);
    if (options.signal.aborted || egressRefusal(streamableError)) throw streamableError;
    // Servers of the older HTTP+SSE protocol reject the streamable handshake; try that next.
    const sse = new Client(clientInfo);
    try {
      await sse.connect(new SSEClientTransport(url, http), requestOptions);
      return { client: sse, stderrTail: () => '' };
    } catch {
      await sse.close().catch(() => undefined);
      throw streamableError;
    }
  }
}

/** Only PATH and the entry's own env: nothing of any other environment. */
function stdioEnvironment(
  config: McpServerConfig,
  path: string | undefined,
): Record<string, string> {
  return { ...(path !== undefined ? { PATH: path } : {}), ...(config.env ?? {}) };
}
