import { mkdtempSync, rmSync } from 'node:fs';
import { openProcessSandbox } from '../../sandbox/backends/process/process-sandbox';
import type { Sandbox } from '../../sandbox/sandbox.types';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EgressGuard } from '../../../../common/egress/egress-guard';
import { McpSetupError, McpToolset } from './mcp-toolset';
import { mcpToolName } from './mcp-tool-names';
import { TS_REGISTER } from '../../../../../test/support/ts-register-path';

const FIXTURE = resolve(__dirname, '../../../../../test/fixtures/mcp-echo-server.ts');
const echoServer = (env: Record<string, string> = {}) => ({
  command: process.execPath,
  args: ['-r', TS_REGISTER, FIXTURE],
  env,
});

describe('McpToolset', () => {
  let workspaceDir: string;
  let sandbox: Sandbox;
  const signal = new AbortController().signal;
  const options = () => ({
    sandbox,
    path: '/usr/local/bin:/usr/bin:/bin',
    egress: EgressGuard.fromSetting('127.0.0.1'),
    timeoutMs: 30_000,
    signal,
  });
  const call = { timeoutMs: 10_000, signal };

  beforeEach(async () => {
    workspaceDir = mkdtempSync(join(tmpdir(), 'ambient-mcp-'));
    sandbox = await openProcessSandbox(workspaceDir);
  });
  afterEach(async () => {
    await sandbox.close();
    rmSync(workspaceDir, { recursive: true, force: true });
  });

  it('offers the tools of a stdio server under prefixed names and forwards calls', async () => {
    process.env.AMBIENT_TEST_SERVER_SECRET = 'leaked';
    const toolset = await McpToolset.connect({ echo: echoServer({ GREETING: 'hi' }) }, options());
    try {
      expect(toolset.definitions().map((tool) => tool.function.name)).toEqual([
        'mcp__echo__add',
        'mcp__echo__whoami',
        'mcp__echo__digest',
        'mcp__echo__fail',
        'mcp__echo__sleep',
      ]);
      expect(toolset.definitions()[0].function.description).toContain('[MCP server echo]');
      expect(await toolset.call('mcp__echo__add', { a: 2, b: 40 }, call)).toBe('The sum is 42');
      expect(await toolset.call('mcp__echo__whoami', { variable: 'GREETING' }, call)).toBe(
        'GREETING=hi',
      );
      // Only PATH and the entry's env reach the server: nothing of this process leaks.
      for (const variable of ['AMBIENT_TEST_SERVER_SECRET', 'HOME', 'USER']) {
        expect(await toolset.call('mcp__echo__whoami', { variable }, call)).toBe(
          `${variable}=(unset)`,
        );
      }
      expect(await toolset.call('mcp__echo__fail', {}, call)).toBe('Error: this tool always fails');
      expect(await toolset.call('mcp__echo__add', { a: 'x' }, call)).toMatch(/^Error: /);
    } finally {
      delete process.env.AMBIENT_TEST_SERVER_SECRET;
      await toolset.close();
    }
  }, 30_000);

  it('fails with environment_setup_failed naming a server whose command cannot start', async () => {
    const failure = McpToolset.connect(
      { echo: echoServer(), broken: { command: 'no-such-mcp-server-binary' } },
      options(),
    );
    await expect(failure).rejects.toBeInstanceOf(McpSetupError);
    await expect(failure).rejects.toMatchObject({
      code: 'environment_setup_failed',
      message: expect.stringContaining('MCP server "broken"'),
    });
  }, 30_000);

  it('reports the stderr of a server that exits during start', async () => {
    const failure = McpToolset.connect(
      {
        crashing: {
          command: process.execPath,
          args: ['-e', 'console.error("missing API token"); process.exit(3)'],
        },
      },
      options(),
    );
    await expect(failure).rejects.toMatchObject({
      code: 'environment_setup_failed',
      message: expect.stringMatching(/MCP server "crashing".*missing API token/s),
    });
  }, 30_000);

  it('fails an unreachable url server with environment_setup_failed', async () => {
    const failure = McpToolset.connect({ remote: { url: 'http://127.0.0.1:9/mcp' } }, options());
    await expect(failure).rejects.toMatchObject({
      code: 'environment_setup_failed',
      message: expect.stringContaining(
        'MCP server "remote" (http://127.0.0.1:9/mcp) failed to start: the connection failed (ECONNREFUSED)',
      ),
    });
  });

  it('refuses a url server on a loopback address under the default egress policy', async () => {
    const failure = McpToolset.connect(
      { remote: { url: 'http://user:pw@127.0.0.1:9/mcp?token=t' } },
      { ...options(), egress: new EgressGuard() },
    );
    await expect(failure).rejects.toMatchObject({
      code: 'environment_setup_failed',
      message:
        'MCP server "remote" (http://127.0.0.1:9/mcp) failed to start: egress refused: ' +
        '127.0.0.1 is a loopback address (AMBIENT_EGRESS_ALLOW)',
    });
  });

  it('refuses warp_id entries with operation_not_supported', async () => {
    await expect(
      McpToolset.connect({ linear: { warp_id: 'abc' } }, options()),
    ).rejects.toMatchObject({
      code: 'operation_not_supported',
      message: expect.stringContaining('MCP server "linear" uses warp_id'),
    });
  });
});

describe('mcpToolName', () => {
  it('prefixes, cleans, cuts to 64 characters and de-duplicates', () => {
    expect(mcpToolName('my server', 'get.issue', new Set())).toBe('mcp__my_server__get_issue');
    const long = mcpToolName('s', 'x'.repeat(100), new Set());
    expect(long).toHaveLength(64);
    expect(mcpToolName('s', 'x'.repeat(100), new Set([long]))).toMatch(/_2$/);
  });
});
