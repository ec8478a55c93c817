import { resolve } from 'node:path';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';
import { TS_REGISTER } from './support/ts-register-path';

const ECHO_SERVER = {
  command: process.execPath,
  args: ['-r', TS_REGISTER, resolve(__dirname, 'fixtures/mcp-echo-server.ts')],
  env: { ECHO_NAME: 'ambient-mcp' },
};

type Block = { type: string; name?: string; category?: string; state?: string; output?: unknown };
type Message = { role: string; content: Block[] };

describe('oz harness with MCP servers (api + worker, stdio MCP fixture)', () => {
  const { model, api } = useTestApp('harness_mcp', ['api', 'worker']);

  const finished = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { what: `run ${runId} to finish`, timeoutMs: 45_000 },
    );

  it('offers MCP tools to the model, forwards the call and records the answer', async () => {
    model.script('mcp-add', [
      {
        toolCalls: [
          { name: 'mcp__echo__add', arguments: { a: 19, b: 23 } },
          { name: 'mcp__echo__whoami', arguments: { variable: 'ECHO_NAME' } },
        ],
      },
      { text: 'The answer is 42.' },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: 'Add 19 and 23 [script:mcp-add]',
      config: { mcp_servers: { echo: ECHO_SERVER } },
    });
    expect(created.status).toBe(200);
    const run = await finished(created.body.run_id);
    expect(run.state).toBe('SUCCEEDED');
    expect(run.status_message).toEqual({ message: 'The answer is 42.' });

    const firstRequest = model.requests.find((r) => r.script === 'mcp-add')!;
    const offered = (firstRequest.body.tools as { function: { name: string } }[]).map(
      (tool) => tool.function.name,
    );
    expect(offered).toEqual(
      expect.arrayContaining(['run_command', 'mcp__echo__add', 'mcp__echo__whoami']),
    );

    const conversation = await api.get(`/agent/runs/${run.run_id}/conversation`);
    expect(conversation.status).toBe(200);
    const messages: Message[] = conversation.body.steps[0].messages;
    const blocks = messages.flatMap((m) => m.content);
    expect(blocks.filter((b) => b.type === 'action')).toEqual([
      expect.objectContaining({ name: 'mcp__echo__add', category: 'integration' }),
      expect.objectContaining({ name: 'mcp__echo__whoami', category: 'integration' }),
    ]);
    expect(blocks.filter((b) => b.type === 'action_result')).toEqual([
      expect.objectContaining({
        name: 'mcp__echo__add',
        state: 'completed',
        output: { text: 'The sum is 42' },
      }),
      expect.objectContaining({
        name: 'mcp__echo__whoami',
        output: { text: 'ECHO_NAME=ambient-mcp' },
      }),
    ]);

    const timeline = await api.get(`/agent/runs/${run.run_id}/timeline`);
    const connected = timeline.body.events.find(
      (e: { event_type: string }) => e.event_type === 'mcp_servers_connected',
    );
    expect(connected).toBeDefined();
  });

  it('fails the run with environment_setup_failed when an MCP server cannot start', async () => {
    const created = await api.post('/agent/runs', {
      prompt: 'Use the tools',
      config: { mcp_servers: { broken: { command: 'ambient-no-such-mcp-server' } } },
    });
    const run = await finished(created.body.run_id);
    expect(run.state).toBe('FAILED');
    expect(run.status_message.error_code).toBe('environment_setup_failed');
    expect(run.status_message.message).toContain('MCP server "broken"');
    expect(
      model.requests.some((r) => r.body.messages.some((m) => m.content === 'Use the tools')),
    ).toBe(false);
  });

  it('fails a warp_id MCP entry with operation_not_supported', async () => {
    const created = await api.post('/agent/runs', {
      prompt: 'Use Linear',
      config: { mcp_servers: { linear: { warp_id: 'linear-mcp' } } },
    });
    const run = await finished(created.body.run_id);
    expect(run.state).toBe('FAILED');
    expect(run.status_message.error_code).toBe('operation_not_supported');
    expect(run.status_message.message).toContain('MCP server "linear" uses warp_id');
  });
});
