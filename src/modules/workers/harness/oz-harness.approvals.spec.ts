import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startFakeModelServer,
  type FakeModelServer,
  type FakeStep,
} from '../../../../test/fixtures/fake-model-server';
import type { ApprovalRule } from '../../run-config';
import { openProcessSandbox } from '../sandbox/backends/process/process-sandbox';
import type { Sandbox } from '../sandbox/sandbox.types';
import { NOT_RUN_AGAIN } from './approval-steps';
import type {
  ApprovalGate,
  ChatMessage,
  EgressTarget,
  HarnessContext,
  RecordedApproval,
} from './harness.types';
import { OzHarness } from './oz-harness';
import { harnessContext } from './oz-harness.fixture';
import { withoutRequestId } from '../../runs';
import { TS_REGISTER } from '../../../../test/support/ts-register-path';

/**
 * The gate as ExecutionApprovals gives it, in memory: the rules, the requests of earlier
 * executions, a take that succeeds once per request, and the proxy's refusals per round.
 */
function memoryGate(
  rules: ApprovalRule[],
  requests: RecordedApproval[] = [],
  refusals: EgressTarget[][] = [],
): ApprovalGate & { take: jest.Mock } {
  const taken = new Set<string>();
  return {
    rules,
    untaken: async () => requests.filter((request) => !taken.has(request.id)),
    take: jest.fn(async (id: string) => {
      if (taken.has(id)) return false;
      taken.add(id);
      return true;
    }),
    unlistedEgress: () => refusals.shift() ?? [],
  };
}

function request(fields: Partial<RecordedApproval> & Pick<RecordedApproval, 'id'>) {
  return {
    kind: 'approval',
    tool: 'run_command',
    toolCallId: null,
    arguments: {},
    rule: null,
    summary: 'something',
    decision: null,
    comment: null,
    decidedBy: null,
    ...fields,
  } satisfies RecordedApproval;
}

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  id,
  type: 'function' as const,
  function: { name, arguments: JSON.stringify(args) },
});

describe('OzHarness with approval rules', () => {
  const harness = new OzHarness();
  let server: FakeModelServer;
  let workspaceDir: string;
  let sandbox: Sandbox;
  let recorded: ChatMessage[];

  beforeAll(async () => {
    server = await startFakeModelServer();
  });
  afterAll(() => server.close());

  beforeEach(async () => {
    server.reset();
    workspaceDir = mkdtempSync(join(tmpdir(), 'ambient-oz-approvals-'));
    sandbox = await openProcessSandbox(workspaceDir);
    recorded = [];
  });
  afterEach(async () => {
    await sandbox.close();
    rmSync(workspaceDir, { recursive: true, force: true });
  });

  function context(overrides: Partial<HarnessContext> = {}): HarnessContext {
    const setup = { modelUrl: server.url, workspaceDir, sandbox, recorded };
    return harnessContext(
      { ...setup, signal: new AbortController().signal, userMessages: [] },
      overrides,
    );
  }

  let scriptCount = 0;
  function scripted(steps: FakeStep[]): string {
    const name = `a${++scriptCount}`;
    server.script(name, steps);
    return `[script:${name}] Do the task`;
  }

  const toolContents = () =>
    recorded.flatMap((m) => (m.role === 'tool' ? [[m.tool_call_id, String(m.content)]] : []));
  const lines = (file: string) =>
    existsSync(join(workspaceDir, file))
      ? readFileSync(join(workspaceDir, file), 'utf8').split('\n').filter(Boolean)
      : [];
  const lastRequestMessages = () => server.requests.at(-1)!.body.messages;

  it('denies a call a deny rule matches, naming the rule, without running it, and carries on', async () => {
    const prompt = scripted([
      { toolCalls: [{ name: 'run_command', arguments: { command: 'git push; touch pushed' } }] },
      { text: 'Could not push.' },
    ]);
    const result = await harness.run(
      context({
        userMessages: [prompt],
        approvals: memoryGate([{ command: '^git push', effect: 'deny' }]),
      }),
    );
    expect(result).toMatchObject({ outcome: 'succeeded', summary: 'Could not push.' });
    expect(existsSync(join(workspaceDir, 'pushed'))).toBe(false);
    expect(toolContents()).toEqual([
      [
        'call_0_0',
        'Denied: run_command: git push; touch pushed is refused by the approval rule on ' +
          'commands matching /^git push/ (deny); it was not run.',
      ],
    ]);
    // The model saw the denial as the call's result.
    expect(lastRequestMessages().at(-1)).toMatchObject({
      role: 'tool',
      content: expect.stringMatching(/^Denied: /),
    });
  });

  it('blocks at a call an ask rule matches: the calls before it ran, it and the later ones did not', async () => {
    const prompt = scripted([
      {
        toolCalls: [
          { name: 'run_command', arguments: { command: 'echo before >> log' } },
          { name: 'run_command', arguments: { command: 'git push origin main; echo push >> log' } },
          { name: 'run_command', arguments: { command: 'echo after >> log' } },
        ],
      },
    ]);
    const result = await harness.run(
      context({
        userMessages: [prompt],
        approvals: memoryGate([{ command: '^git push', effect: 'ask' }]),
      }),
    );
    expect(result).toEqual({
      outcome: 'blocked',
      summary: 'run_command: git push origin main; echo push >> log',
      pending: {
        kind: 'approval',
        tool: 'run_command',
        toolCallId: 'call_0_1',
        arguments: { command: 'git push origin main; echo push >> log' },
        rule: { command: '^git push', effect: 'ask' },
        summary: 'run_command: git push origin main; echo push >> log',
      },
      usage: { promptTokens: 20, completionTokens: 5, modelCalls: 1 },
    });
    expect(lines('log')).toEqual(['before']);
    expect(recorded.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  });

  it('asks about writes outside the allowed paths by their absolute sandbox path, and about named MCP tools', async () => {
    const rules: ApprovalRule[] = [
      { write_outside: [`${sandbox.workdir}/app`], effect: 'ask' },
      { mcp_tool: 'echo/add', effect: 'ask' },
    ];
    const prompt = scripted([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'app/ok.txt', content: 'ok' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.md', content: 'no' } }] },
    ]);
    const result = await harness.run(
      context({ userMessages: [prompt], approvals: memoryGate(rules) }),
    );
    expect(readFileSync(join(workspaceDir, 'app/ok.txt'), 'utf8')).toBe('ok');
    expect(existsSync(join(workspaceDir, 'notes.md'))).toBe(false);
    expect(result.pending).toMatchObject({
      tool: 'write_file',
      summary: `write_file ${sandbox.workdir}/notes.md`,
      rule: rules[0],
    });

    const echo = {
      command: process.execPath,
      args: ['-r', TS_REGISTER, join(__dirname, '../../../../test/fixtures/mcp-echo-server.ts')],
    };
    const mcpPrompt = scripted([
      { toolCalls: [{ name: 'mcp__echo__add', arguments: { a: 1, b: 2 } }] },
    ]);
    const mcp = await harness.run(
      context({
        userMessages: [mcpPrompt],
        config: { mcp_servers: { echo } },
        approvals: memoryGate(rules),
      }),
    );
    expect(mcp.pending).toMatchObject({
      tool: 'mcp__echo__add',
      summary: 'MCP tool echo/add {"a":1,"b":2}',
      rule: rules[1],
    });
  }, 30_000);

  it('resumes: the approved call runs once with its output in the conversation, the calls after it are evaluated, then the model goes on', async () => {
    const prompt = scripted([{ text: 'unused: the history holds step 0' }, { text: 'Pushed.' }]);
    const history: ChatMessage[] = [
      { role: 'user', content: prompt },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          call('c1', 'run_command', { command: 'echo before >> log' }),
          call('c2', 'run_command', { command: 'echo pushed >> log; echo done' }),
          call('c3', 'run_command', { command: 'echo after >> log' }),
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"exit_code":0}' },
    ];
    const gate = memoryGate(
      [{ command: 'pushed', effect: 'ask' }],
      [request({ id: 'r1', toolCallId: 'c2', decision: 'approve', decidedBy: 'Alice' })],
    );
    const result = await harness.run(context({ history, approvals: gate }));
    expect(result).toMatchObject({ outcome: 'succeeded', summary: 'Pushed.' });
    expect(gate.take).toHaveBeenCalledTimes(1);
    expect(lines('log')).toEqual(['pushed', 'after']);
    expect(toolContents().map(([id]) => id)).toEqual(['c2', 'c3']);
    expect(JSON.parse(toolContents()[0][1])).toMatchObject({ exit_code: 0, output: 'done\n' });
    // The provider got every call answered, in order, before the model's next turn.
    expect(
      lastRequestMessages()
        .filter((m) => m.role === 'tool')
        .map((m) => m.tool_call_id),
    ).toEqual(['c1', 'c2', 'c3']);
  });

  it('does not run an approved call whose decision an earlier execution took', async () => {
    const prompt = scripted([{ text: 'unused' }, { text: 'ok' }]);
    const history: ChatMessage[] = [
      { role: 'user', content: prompt },
      {
        role: 'assistant',
        content: null,
        tool_calls: [call('c1', 'run_command', { command: 'echo ran >> log' })],
      },
    ];
    const gate = memoryGate([], [request({ id: 'r1', toolCallId: 'c1', decision: 'approve' })]);
    gate.take.mockResolvedValueOnce(false);
    await harness.run(context({ history, approvals: gate }));
    expect(lines('log')).toEqual([]);
    expect(toolContents()).toEqual([['c1', NOT_RUN_AGAIN]]);
  });

  it('tells the model who denied a call and why; a deny rule added while the run waited still refuses an approved call', async () => {
    const prompt = scripted([{ text: 'unused' }, { text: 'ok' }]);
    const history: ChatMessage[] = [
      { role: 'user', content: prompt },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          call('c1', 'run_command', { command: 'echo one >> log' }),
          call('c2', 'run_command', { command: 'echo two >> log' }),
        ],
      },
    ];
    const gate = memoryGate(
      [{ command: 'two', effect: 'deny' }],
      [
        request({
          id: 'r1',
          toolCallId: 'c1',
          decision: 'deny',
          comment: 'not on a Friday',
          decidedBy: 'Alice',
        }),
        request({ id: 'r2', toolCallId: 'c2', decision: 'approve', decidedBy: 'Bob' }),
      ],
    );
    await harness.run(context({ history, approvals: gate }));
    expect(lines('log')).toEqual([]);
    expect(toolContents()).toEqual([
      ['c1', 'Denied: Alice denied this call, so it was not run. Their reason: not on a Friday'],
      [
        'c2',
        expect.stringMatching(
          /^Denied: run_command: echo two >> log is refused by the approval rule/,
        ),
      ],
    ]);
    expect(lastRequestMessages().at(-2)).toMatchObject({
      role: 'tool',
      content: expect.stringContaining('not on a Friday'),
    });
  });

  it('asks the user with ask_user and gives the model the answer when it resumes', async () => {
    const prompt = scripted([
      { toolCalls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
      { text: 'Painted it blue.' },
    ]);
    const asked = await harness.run(context({ userMessages: [prompt], approvals: memoryGate([]) }));
    expect(asked).toMatchObject({
      outcome: 'blocked',
      summary: 'Which colour?',
      pending: {
        kind: 'question',
        tool: 'ask_user',
        toolCallId: 'call_0_0',
        arguments: { question: 'Which colour?' },
        rule: null,
      },
    });
    const systemPrompt = String(server.requests[0].body.messages[0].content);
    expect(systemPrompt).toContain('ask_user');
    expect(systemPrompt).not.toContain('no one answers questions');
    expect(server.requests[0].body.tools).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ function: expect.objectContaining({ name: 'ask_user' }) }),
      ]),
    );

    const history = recorded.map((m) => withoutRequestId(m));
    recorded = [];
    const answered = await harness.run(
      context({
        history,
        approvals: memoryGate(
          [],
          [
            request({
              id: 'q1',
              kind: 'question',
              tool: 'ask_user',
              toolCallId: 'call_0_0',
              decision: 'answer',
              comment: 'Blue, please.',
              decidedBy: 'Bob',
            }),
          ],
        ),
      }),
    );
    expect(answered).toMatchObject({ outcome: 'succeeded', summary: 'Painted it blue.' });
    expect(toolContents()).toEqual([['call_0_0', 'Bob answered: Blue, please.']]);
  });

  it('blocks again at once on a request nobody decided, running nothing', async () => {
    const prompt = scripted([{ text: 'never' }]);
    const history: ChatMessage[] = [
      { role: 'user', content: prompt },
      {
        role: 'assistant',
        content: null,
        tool_calls: [call('c1', 'run_command', { command: 'echo ran >> log' })],
      },
    ];
    const gate = memoryGate(
      [{ command: 'ran', effect: 'ask' }],
      [request({ id: 'r1', toolCallId: 'c1', summary: 'run_command: echo ran >> log' })],
    );
    const result = await harness.run(context({ history, approvals: gate }));
    expect(result).toMatchObject({
      outcome: 'blocked',
      pending: { existingId: 'r1', toolCallId: 'c1', summary: 'run_command: echo ran >> log' },
    });
    expect(gate.take).not.toHaveBeenCalled();
    expect(server.requests).toHaveLength(0);
    expect(lines('log')).toEqual([]);
  });

  it('asks about a host the proxy refused after the round of calls, and tells the model the decision on resume', async () => {
    const rule: ApprovalRule = { egress: 'unlisted', effect: 'ask' };
    const prompt = scripted([
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo fetched' } }] },
      { text: 'Fetched it.' },
    ]);
    const blocked = await harness.run(
      context({
        userMessages: [prompt],
        approvals: memoryGate([rule], [], [[{ host: 'example.org', port: 443 }]]),
      }),
    );
    expect(blocked).toMatchObject({
      outcome: 'blocked',
      pending: {
        kind: 'approval',
        tool: 'egress',
        toolCallId: null,
        arguments: { host: 'example.org', port: 443 },
        rule,
        summary: "egress to example.org:443 (not in the environment's allowlist)",
      },
    });
    // The call whose command was refused has its result: the block comes after the round.
    expect(recorded.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);

    const history = recorded.map((m) => withoutRequestId(m));
    recorded = [];
    const resumed = await harness.run(
      context({
        history,
        approvals: memoryGate(
          [rule],
          [
            request({
              id: 'e1',
              tool: 'egress',
              arguments: { host: 'example.org', port: 443 },
              decision: 'approve',
              decidedBy: 'Alice',
            }),
          ],
        ),
      }),
    );
    expect(resumed).toMatchObject({ outcome: 'succeeded', summary: 'Fetched it.' });
    expect(lastRequestMessages().at(-1)).toEqual({
      role: 'user',
      content:
        '[Ambient] Alice approved egress to example.org:443: it is allowed for the rest of this ' +
        'run, so retry what it refused.',
    });
  });

  it('offers no ask_user and checks nothing without a gate', async () => {
    const prompt = scripted([
      { toolCalls: [{ name: 'ask_user', arguments: { question: 'Well?' } }] },
      { text: 'ok' },
    ]);
    const result = await harness.run(context({ userMessages: [prompt] }));
    expect(result.outcome).toBe('succeeded');
    expect(String(server.requests[0].body.messages[0].content)).toContain(
      'no one answers questions',
    );
    expect(toolContents()[0][1]).toMatch(/^Error: unknown tool "ask_user"/);
  });
});
