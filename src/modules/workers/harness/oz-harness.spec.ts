import { createServer } from 'node:http';
import { openProcessSandbox } from '../sandbox/backends/process/process-sandbox';
import type { Sandbox } from '../sandbox/sandbox.types';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRunning } from '../../../../test/support/processes';
import { waitFor } from '../../../../test/support/wait';
import {
  startFakeModelServer,
  type FakeModelServer,
  type FakeStep,
} from '../../../../test/fixtures/fake-model-server';
import type { ChatMessage, HarnessContext } from './harness.types';
import { OzHarness } from './oz-harness';
import { ExecutionTimeline } from './execution-timeline';
import { COMMAND_PATH, fakeModel, harnessContext } from './oz-harness.fixture';
import { withoutRequestId } from '../../runs';
import { TS_REGISTER } from '../../../../test/support/ts-register-path';

/** Waits for a synchronous condition (a file, a process) with the shared poller. */
const waitUntil = (condition: () => boolean, what: string, timeoutMs = 10_000) =>
  waitFor(async () => condition(), Boolean, { timeoutMs, intervalMs: 10, what });

describe('OzHarness', () => {
  const harness = new OzHarness();
  let server: FakeModelServer;
  let workspaceDir: string;
  let sandbox: Sandbox;
  let controller: AbortController;
  let recorded: ChatMessage[];

  beforeAll(async () => {
    server = await startFakeModelServer();
  });
  afterAll(() => server.close());

  beforeEach(async () => {
    server.reset();
    workspaceDir = mkdtempSync(join(tmpdir(), 'ambient-oz-'));
    sandbox = await openProcessSandbox(workspaceDir);
    controller = new AbortController();
    recorded = [];
  });
  afterEach(async () => {
    await sandbox.close();
    rmSync(workspaceDir, { recursive: true, force: true });
  });

  function context(overrides: Partial<HarnessContext> = {}): HarnessContext {
    const setup = { modelUrl: server.url, workspaceDir, sandbox, recorded };
    return harnessContext(
      { ...setup, signal: controller.signal, userMessages: ['Say hello'] },
      overrides,
    );
  }

  /** Registers `steps` under a fresh script name and returns a prompt that selects it. */
  let scriptCount = 0;
  function scripted(steps: FakeStep[], prompt = 'Do the task'): string {
    const name = `s${++scriptCount}`;
    server.script(name, steps);
    return `[script:${name}] ${prompt}`;
  }

  const toolResults = () =>
    recorded.filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool');
  const commandResult = (message: ChatMessage) => JSON.parse(message.content as string);

  it('stops with its usage when a refused write aborted the execution, and runs no tool', async () => {
    const prompt = scripted([
      { toolCalls: [{ name: 'run_command', arguments: { command: 'touch ran' } }] },
    ]);
    const result = await harness.run(
      context({
        userMessages: [prompt],
        // As ExecutionFence does for a stale execution: abort, then throw.
        recordMessage: async (message) => {
          if (message.role !== 'assistant') return void recorded.push(message);
          controller.abort('lost');
          throw new Error('the run is no longer held');
        },
      }),
    );
    expect(result).toEqual({
      outcome: 'cancelled',
      summary: 'Run cancelled',
      usage: { promptTokens: 20, completionTokens: 5, modelCalls: 1 },
    });
    expect(existsSync(join(workspaceDir, 'ran'))).toBe(false);
  });

  it('returns the answer of a model that replies without tools', async () => {
    const prompt = scripted([{ text: 'Hello there' }]);
    const result = await harness.run(
      context({ userMessages: [prompt], config: { base_prompt: 'Always be brief.' } }),
    );

    expect(result).toEqual({
      outcome: 'succeeded',
      summary: 'Hello there',
      usage: { promptTokens: 20, completionTokens: 5, modelCalls: 1 },
    });
    expect(recorded).toEqual([
      { role: 'user', content: prompt },
      // The provider's response id is stored beside the turn (the conversation's request_id).
      {
        role: 'assistant',
        content: 'Hello there',
        request_id: expect.stringMatching(/^chatcmpl-fake-/),
      },
    ]);
    const [request] = server.requests;
    expect(request.authorization).toBe('Bearer test-key');
    expect(request.body.model).toBe('fake-model');
    expect(request.body.messages[0].role).toBe('system');
    expect(request.body.messages[0].content).toContain('Always be brief.');
    expect(request.body.messages[0].content).not.toContain('plan mode');
    expect(
      (request.body.tools as { function: { name: string } }[]).map((tool) => tool.function.name),
    ).toEqual([
      'run_command',
      'read_file',
      'write_file',
      'edit_file',
      'list_files',
      'search_files',
      'finish',
    ]);
  });

  it("sends the catalogue's reasoning level as reasoning_effort to OpenAI, not to other servers", async () => {
    const openai = { ...fakeModel(server.url), reasoningLevel: 'high' };
    await harness.run(context({ model: openai }));
    const unknown = { ...openai, provider: { ...openai.provider, kind: 'UNKNOWN' as const } };
    await harness.run(context({ model: unknown }));
    expect(server.requests.map((r) => r.body.reasoning_effort)).toEqual(['high', undefined]);
  });

  it('answers "Done." when a model without a script replies instantly', async () => {
    const result = await harness.run(context());
    expect(result).toMatchObject({ outcome: 'succeeded', summary: 'Done.' });
  });

  it('sends history before the new user turns without recording it, and plans in plan mode', async () => {
    const prompt = scripted([{ text: 'The plan' }]);
    const history: ChatMessage[] = [
      { role: 'user', content: 'earlier question' },
      { role: 'assistant', content: 'earlier answer' },
    ];
    await harness.run(context({ mode: 'plan', history, userMessages: [prompt] }));

    const { messages } = server.requests[0].body;
    expect(messages[0].content).toContain('plan mode');
    expect(messages.slice(1).map((m) => m.content)).toEqual([
      'earlier question',
      'earlier answer',
      prompt,
    ]);
    expect(recorded.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('runs a command in the workspace, returns its result to the model and sums usage', async () => {
    const prompt = scripted([
      {
        toolCalls: [
          { name: 'run_command', arguments: { command: 'echo hi > out.txt; cat out.txt' } },
        ],
      },
      { text: 'Wrote out.txt' },
    ]);
    const result = await harness.run(context({ userMessages: [prompt] }));

    expect(result).toEqual({
      outcome: 'succeeded',
      summary: 'Wrote out.txt',
      // Requests hold 2 and 4 messages; the fake bills 10 prompt tokens a message, 5 per reply.
      usage: { promptTokens: 60, completionTokens: 10, modelCalls: 2 },
    });
    expect(readFileSync(join(workspaceDir, 'out.txt'), 'utf8')).toBe('hi\n');
    expect(recorded.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    const [toolMessage] = toolResults();
    expect(toolMessage.tool_call_id).toBe('call_0_0');
    expect(commandResult(toolMessage)).toEqual({ exit_code: 0, output: 'hi\n', timed_out: false });
    // The tool result shares its call's request id when stored; the provider never sees it.
    const assistant = recorded[1] as unknown as { request_id?: string };
    expect(assistant.request_id).toMatch(/^chatcmpl-fake-/);
    expect((toolMessage as unknown as { request_id?: string }).request_id).toBe(
      assistant.request_id,
    );
    expect(server.requests[1].body.messages.at(-1)).toEqual(withoutRequestId(toolMessage));
    expect(JSON.stringify(server.requests[1].body.messages)).not.toContain('request_id');
  });

  it("holds a command's timeline events so that a short command's are written together", async () => {
    const writes: string[][] = [];
    const timeline = new ExecutionTimeline(async (events) => {
      writes.push(events.map((e) => e.eventType));
    });
    const prompt = scripted([
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi' } }] },
      { text: 'Done' },
    ]);
    const result = await harness.run(
      context({
        userMessages: [prompt],
        emitEvent: timeline.emit,
        holdEvents: () => timeline.hold(60_000),
      }),
    );
    expect(result.outcome).toBe('succeeded');
    expect(writes).toEqual([['command_started', 'command_output', 'command_finished']]);
  });

  it('gives commands exactly the command environment', async () => {
    process.env.FOO = 'server-secret';
    try {
      const command = 'echo "FOO=${FOO:-unset} BAR=${BAR:-unset}"';
      const prompt = scripted([{ toolCalls: [{ name: 'run_command', arguments: { command } }] }]);
      await harness.run(
        context({ userMessages: [prompt], commandEnv: { PATH: COMMAND_PATH, BAR: 'run-value' } }),
      );
      expect(commandResult(toolResults()[0]).output).toBe('FOO=unset BAR=run-value\n');
    } finally {
      delete process.env.FOO;
    }
  });

  it('tells the model about invalid arguments and unknown tools and carries on', async () => {
    const prompt = scripted([
      {
        toolCalls: [
          { name: 'run_command', arguments: '{not json' },
          { name: 'run_command', arguments: { command: 42 } },
          { name: 'fly', arguments: {} },
        ],
      },
      { text: 'Recovered' },
    ]);
    const result = await harness.run(context({ userMessages: [prompt] }));

    expect(result).toMatchObject({ outcome: 'succeeded', summary: 'Recovered' });
    const contents = toolResults().map((m) => m.content);
    expect(contents[0]).toMatch(/not valid JSON/);
    expect(contents[1]).toMatch(/non-empty "command" string/);
    expect(contents[2]).toMatch(/unknown tool "fly"/);
  });

  it('ends the run with the summary given to finish', async () => {
    const prompt = scripted([
      {
        toolCalls: [
          { name: 'finish', arguments: { summary: 'All done' } },
          { name: 'run_command', arguments: { command: 'touch late.txt' } },
        ],
      },
    ]);
    const result = await harness.run(context({ userMessages: [prompt] }));

    expect(result).toMatchObject({ outcome: 'succeeded', summary: 'All done' });
    expect(server.requests).toHaveLength(1);
    expect(toolResults()).toHaveLength(2);
    expect(existsSync(join(workspaceDir, 'late.txt'))).toBe(false);
  });

  it('delivers follow-ups before finishing and after tool rounds', async () => {
    const followups = [['Also list the files'], ['And say bye']];
    const prompt = scripted([
      { text: 'First answer' },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'ls' } }] },
      { text: 'Bye' },
    ]);
    const result = await harness.run(
      context({ userMessages: [prompt], takeFollowups: async () => followups.shift() ?? [] }),
    );

    expect(result).toMatchObject({ outcome: 'succeeded', summary: 'Bye' });
    expect(
      recorded.map((m) => `${m.role}:${typeof m.content === 'string' ? m.content : ''}`),
    ).toEqual([
      `user:${prompt}`,
      'assistant:First answer',
      'user:Also list the files',
      'assistant:',
      expect.stringMatching(/^tool:/),
      'user:And say bye',
      'assistant:Bye',
    ]);
    expect(server.requests[2].body.messages.at(-1)).toEqual({
      role: 'user',
      content: 'And say bye',
    });
  });

  it('fails with budget_exceeded after the turn limit', async () => {
    const loop: FakeStep = { toolCalls: [{ name: 'run_command', arguments: { command: 'true' } }] };
    const prompt = scripted([loop, loop, loop]);
    const result = await harness.run(
      context({
        userMessages: [prompt],
        limits: { maxTurns: 2, deadline: Date.now() + 60_000, commandTimeoutSeconds: 30 },
      }),
    );

    expect(result).toMatchObject({
      outcome: 'failed',
      errorCode: 'budget_exceeded',
      summary: 'the run stopped after reaching its limit of 2 model turns',
      usage: { modelCalls: 2 },
    });
    expect(server.requests).toHaveLength(2);
  });

  it('fails with budget_exceeded when the deadline passes during a model call', async () => {
    const prompt = scripted([{ hang: true }]);
    const result = await harness.run(
      context({
        userMessages: [prompt],
        limits: { maxTurns: 10, deadline: Date.now() + 300, commandTimeoutSeconds: 30 },
      }),
    );

    expect(result).toMatchObject({ outcome: 'failed', errorCode: 'budget_exceeded' });
    expect(result.summary).toMatch(/^the run exceeded its maximum run time of \d+ seconds$/);
  });

  it('kills a running command when the deadline passes', async () => {
    const command = 'sleep 30 & echo $! > child.pid; wait';
    const prompt = scripted([{ toolCalls: [{ name: 'run_command', arguments: { command } }] }]);
    const result = await harness.run(
      context({
        userMessages: [prompt],
        limits: { maxTurns: 10, deadline: Date.now() + 2_000, commandTimeoutSeconds: 30 },
      }),
    );

    expect(result).toMatchObject({ outcome: 'failed', errorCode: 'budget_exceeded' });
    const childPid = Number(readFileSync(join(workspaceDir, 'child.pid'), 'utf8'));
    await waitUntil(() => !isRunning(childPid), 'the command to die');
  });

  it('stops a running command when cancelled', async () => {
    const command = 'sleep 30 & echo $! > child.pid; wait';
    const prompt = scripted([{ toolCalls: [{ name: 'run_command', arguments: { command } }] }]);
    const pending = harness.run(context({ userMessages: [prompt] }));

    const pidFile = join(workspaceDir, 'child.pid');
    await waitUntil(
      () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'),
      'the command to start',
    );
    controller.abort();
    const result = await pending;

    expect(result).toMatchObject({ outcome: 'cancelled', summary: 'Run cancelled' });
    const childPid = Number(readFileSync(pidFile, 'utf8'));
    await waitUntil(() => !isRunning(childPid), 'the command to die');
    expect(toolResults()).toHaveLength(0);
  });

  it('offers MCP tools, forwards calls and stops the MCP servers when cancelled', async () => {
    const echo = {
      command: process.execPath,
      args: ['-r', TS_REGISTER, join(__dirname, '../../../../test/fixtures/mcp-echo-server.ts')],
      env: { MCP_PID_FILE: 'mcp.pid' },
    };
    const prompt = scripted([
      { toolCalls: [{ name: 'mcp__echo__add', arguments: { a: 1, b: 2 } }] },
      { toolCalls: [{ name: 'mcp__echo__sleep', arguments: { ms: 30_000 } }] },
    ]);
    const pending = harness.run(
      context({ userMessages: [prompt], config: { mcp_servers: { echo } } }),
    );

    await waitUntil(() => toolResults().length === 1, 'the first MCP call', 20_000);
    expect(toolResults()[0].content).toBe('The sum is 3');
    await waitUntil(() => server.requests.length === 2, 'the second model request');
    const pid = Number(readFileSync(join(workspaceDir, 'mcp.pid'), 'utf8'));
    expect(isRunning(pid)).toBe(true);
    controller.abort();

    expect(await pending).toMatchObject({ outcome: 'cancelled' });
    await waitUntil(() => !isRunning(pid), 'the MCP server to stop');
  }, 30_000);

  it('fails with environment_setup_failed before calling the model when MCP cannot start', async () => {
    const result = await harness.run(
      context({ config: { mcp_servers: { gone: { command: 'ambient-no-such-binary' } } } }),
    );
    expect(result).toMatchObject({ outcome: 'failed', errorCode: 'environment_setup_failed' });
    expect(result.summary).toContain('MCP server "gone" (command "ambient-no-such-binary")');
    expect(server.requests).toHaveLength(0);
  });

  it('stops waiting for the model when cancelled', async () => {
    const prompt = scripted([{ hang: true }]);
    const pending = harness.run(context({ userMessages: [prompt] }));

    await waitUntil(() => server.requests.length === 1, 'the model request');
    controller.abort();

    expect(await pending).toMatchObject({ outcome: 'cancelled', summary: 'Run cancelled' });
  });

  it('returns cancelled without calling the model when already cancelled', async () => {
    controller.abort();
    expect(await harness.run(context())).toMatchObject({ outcome: 'cancelled' });
    expect(server.requests).toHaveLength(0);
  });

  it('maps a 401 from the provider to external_authentication_required', async () => {
    const prompt = scripted([{ status: 401, error: 'Incorrect API key provided' }]);
    const result = await harness.run(context({ userMessages: [prompt] }));

    expect(result).toMatchObject({
      outcome: 'failed',
      errorCode: 'external_authentication_required',
    });
    expect(result.summary).toContain('"fake"');
    expect(result.summary).toContain('401');
    expect(result.summary).toContain('Incorrect API key provided');
    expect(server.requests).toHaveLength(1);
  });

  it('maps a 400 from the provider to invalid_request with the provider message', async () => {
    const prompt = scripted([{ status: 400, error: 'model does not support tools' }]);
    const result = await harness.run(context({ userMessages: [prompt] }));

    expect(result).toMatchObject({ outcome: 'failed', errorCode: 'invalid_request' });
    expect(result.summary).toContain('model does not support tools');
  });

  it('maps a persistent 503 to resource_unavailable after retrying', async () => {
    const prompt = scripted([{ status: 503, error: 'overloaded' }]);
    const result = await harness.run(context({ userMessages: [prompt] }));

    expect(result).toMatchObject({ outcome: 'failed', errorCode: 'resource_unavailable' });
    expect(server.requests).toHaveLength(3);
  });

  it('maps an unreachable provider to resource_unavailable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));

    const result = await harness.run(context({ model: fakeModel(`http://127.0.0.1:${port}/v1`) }));

    expect(result).toMatchObject({ outcome: 'failed', errorCode: 'resource_unavailable' });
    expect(result.summary).toContain('could not reach model provider "fake"');
  });

  it('honours a delayed reply', async () => {
    const prompt = scripted([{ delayMs: 50, then: { text: 'Slow hello' } }]);
    const result = await harness.run(context({ userMessages: [prompt] }));
    expect(result).toMatchObject({ outcome: 'succeeded', summary: 'Slow hello' });
  });

  describe("against Anthropic's Messages API", () => {
    const anthropic = (prompt: string, overrides: Partial<HarnessContext> = {}) =>
      context({
        model: fakeModel(server.url, 'anthropic_messages'),
        userMessages: [prompt],
        ...overrides,
      });

    it('runs a tool round: system apart, tool_use and tool_result blocks, usage summed', async () => {
      const prompt = scripted([
        { toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi > out.txt' } }] },
        { text: 'Wrote out.txt' },
      ]);
      const result = await harness.run(
        anthropic(prompt, { config: { base_prompt: 'Always be brief.' } }),
      );

      expect(result).toEqual({
        outcome: 'succeeded',
        summary: 'Wrote out.txt',
        // The system prompt is no message here: requests hold 1 and 3 messages.
        usage: { promptTokens: 40, completionTokens: 10, modelCalls: 2 },
      });
      expect(readFileSync(join(workspaceDir, 'out.txt'), 'utf8')).toBe('hi\n');
      const [first, second] = server.requests;
      expect(first.api).toBe('messages');
      expect(first.authorization).toBe('Bearer test-key');
      expect(first.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(first.body).toMatchObject({ model: 'fake-model', max_tokens: 1024 });
      expect(first.body.system).toContain('Always be brief.');
      expect(first.body.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: prompt }] },
      ]);
      const tools = first.body.tools as { name: string; input_schema: { type: string } }[];
      expect(tools[0]).toMatchObject({ name: 'run_command', input_schema: { type: 'object' } });

      // The conversation is kept in one form whatever the provider: the tool call's id is Anthropic's.
      const [toolMessage] = toolResults();
      expect(toolMessage.tool_call_id).toBe('toolu_0_0');
      expect(second.body.messages.slice(1)).toEqual([
        {
          role: 'assistant',
          content: [
            {
              type: 'tool_use',
              id: 'toolu_0_0',
              name: 'run_command',
              input: { command: 'echo hi > out.txt' },
            },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_0_0', content: toolMessage.content },
          ],
        },
      ]);
    });

    it("maps Anthropic's 401 to external_authentication_required with its message", async () => {
      const prompt = scripted([{ status: 401, error: 'invalid x-api-key' }]);
      const result = await harness.run(anthropic(prompt));
      expect(result).toMatchObject({
        outcome: 'failed',
        errorCode: 'external_authentication_required',
      });
      expect(result.summary).toBe(
        'model provider "fake" rejected the credentials with HTTP 401: invalid x-api-key',
      );
    });

    it('maps an overloaded provider to resource_unavailable after retrying', async () => {
      const prompt = scripted([{ status: 529, error: 'Overloaded' }]);
      const result = await harness.run(anthropic(prompt));
      expect(result).toMatchObject({ outcome: 'failed', errorCode: 'resource_unavailable' });
      expect(result.summary).toContain('Overloaded');
      expect(server.requests).toHaveLength(3);
    });
  });
});
