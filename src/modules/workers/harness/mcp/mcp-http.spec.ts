import type { Sandbox } from '../../sandbox/sandbox.types';
import {
  INTERNAL_BODY,
  startHttpMcpServer,
  type HttpMcpServer,
} from '../../../../../test/fixtures/http-mcp-server';
import { EgressGuard } from '../../../../common/egress/egress-guard';
import { McpToolset } from './mcp-toolset';

describe('McpToolset over streamable HTTP', () => {
  let http: HttpMcpServer;
  const signal = new AbortController().signal;
  // HTTP servers are reached from this process: no program is started in the sandbox.
  const sandbox = {} as Sandbox;
  const egress = EgressGuard.fromSetting('127.0.0.1');
  const options = { sandbox, path: undefined, egress, timeoutMs: 10_000, signal };

  beforeAll(async () => {
    http = await startHttpMcpServer('sekret');
  });
  afterAll(() => http.close());

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
    await expect(failure).rejects.not.toThrow(INTERNAL_BODY);
  });
});
