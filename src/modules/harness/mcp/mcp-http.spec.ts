import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Sandbox } from '../../sandbox/sandbox.types';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { EgressGuard } from '../../../common/egress/egress-guard';
import { McpToolset } from './mcp-toolset';

/** A stateless streamable-HTTP MCP server that wants `x-api-key: sekret`. */
function startHttpMcpServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    void (async () => {
      if (req.headers['x-api-key'] !== 'sekret') {
        return res.writeHead(401).end('internal-body: do not repeat me');
      }
      if (req.method !== 'POST') return res.writeHead(405).end();
      const body = JSON.parse(await readBody(req)) as unknown;
      const mcp = new McpServer({ name: 'http-test', version: '1.0.0' });
      mcp.registerTool('ping', { description: 'Answers pong.' }, () => ({
        content: [{ type: 'text', text: 'pong' }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void mcp.close());
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
    })();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}/mcp`, server });
    }),
  );
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe('McpToolset over streamable HTTP', () => {
  let http: { url: string; server: Server };
  const signal = new AbortController().signal;
  // HTTP servers are reached from this process: no program is started in the sandbox.
  const sandbox = {} as Sandbox;
  const egress = EgressGuard.fromSetting('127.0.0.1');
  const options = { sandbox, path: undefined, egress, timeoutMs: 10_000, signal };

  beforeAll(async () => {
    http = await startHttpMcpServer();
  });
  afterAll(() => new Promise((resolve) => http.server.close(resolve)));

  it('connects with the configured headers and calls tools', async () => {
    const toolset = await McpToolset.connect(
      { remote: { url: http.url, headers: { 'x-api-key': 'sekret' } } },
      options,
    );
    try {
      expect(toolset.definitions().map((tool) => tool.function.name)).toEqual([
        'mcp__remote__ping',
      ]);
      expect(await toolset.call('mcp__remote__ping', {}, { timeoutMs: 5_000, signal })).toBe(
        'pong',
      );
    } finally {
      await toolset.close();
    }
  });

  it('fails with environment_setup_failed naming the status, never the body, when the server refuses the headers', async () => {
    const failure = McpToolset.connect(
      { remote: { url: http.url, headers: { 'x-api-key': 'wrong' } } },
      options,
    );
    await expect(failure).rejects.toMatchObject({
      code: 'environment_setup_failed',
      message: `MCP server "remote" (${http.url}) failed to start: the server answered HTTP 401`,
    });
  });
});
