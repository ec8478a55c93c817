import { processesWithEnv } from './support/processes';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';
import { TS_REGISTER } from './support/ts-register-path';

const CLIS = resolve(__dirname, 'fixtures/vendor-clis');
const MCP_SERVERS = {
  echo: {
    command: process.execPath,
    args: ['-r', TS_REGISTER, resolve(__dirname, 'fixtures/mcp-echo-server.ts')],
    env: { ECHO_NAME: 'vendor-mcp' },
  },
  remote: { url: 'https://mcp.example.test/mcp', headers: { Authorization: 'Bearer mcp-token' } },
};

/** The claude, codex and gemini harnesses, run against fake CLIs that print real event shapes. */
describe('vendor CLI harnesses (api + worker, fake claude/codex/gemini CLIs)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    process.env.AMBIENT_LEAK_CANARY = 'server-only';
    model = await startFakeModelServer();
    env = createTestEnvironment('vendors', model.url);
    app = await startTestApp(env, ['api', 'worker'], {
      'vendorClis.claudeBin': join(CLIS, 'claude'),
      'vendorClis.codexBin': join(CLIS, 'codex'),
      'vendorClis.geminiBin': join(CLIS, 'gemini'),
    });
    api = apiClient(app.baseUrl, app.apiKey);
    for (const name of ['ANTHROPIC_KEY', 'OPENAI_KEY', 'GEMINI_KEY']) {
      expect((await api.post('/secrets', { name, value: `value-of-${name}` })).status).toBe(201);
    }
  });

  afterAll(async () => {
    delete process.env.AMBIENT_LEAK_CANARY;
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  const finished = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      // A run with a stdio MCP server starts it from TypeScript (test/support/ts-register.js) inside its
      // sandbox: on a loaded 2-core machine that start alone took over 15 s, and on a slower one
      // beside a CI run and two busy loops such runs took 26-48 s (one passed 50 s). A hang guard,
      // within the test's own 120 s.
      { what: `run ${runId} to finish`, timeoutMs: 100_000 },
    );

  const auth = {
    claude: { claude_auth_secret_name: 'ANTHROPIC_KEY' },
    codex: { codex_auth_secret_name: 'OPENAI_KEY' },
    gemini: { gemini_auth_secret_name: 'GEMINI_KEY' },
  };
  const start = async (type: 'claude' | 'codex' | 'gemini', prompt: string, extra = {}) => {
    const created = await api.post('/agent/runs', {
      prompt,
      config: {
        harness: { type, model_id: `${type}-model` },
        harness_auth_secrets: auth[type],
        ...extra,
      },
    });
    expect(created.status).toBe(200);
    return created.body.run_id as string;
  };
  const workspaceFile = (runId: string, name: string) =>
    readFileSync(join(env.workspaceRoot, runId, name), 'utf8');

  const cases = [
    {
      type: 'claude' as const,
      summary: 'The workspace has a README.',
      roles: ['user', 'assistant', 'tool', 'assistant'],
      secretVar: 'ANTHROPIC_API_KEY',
      secret: 'value-of-ANTHROPIC_KEY',
      args: ['--output-format', 'stream-json', '--verbose', '--model', 'claude-model'],
      tokens: 260,
    },
    {
      type: 'codex' as const,
      summary: 'Codex found a README.',
      roles: ['user', 'assistant', 'tool', 'assistant'],
      secretVar: 'CODEX_API_KEY',
      secret: 'value-of-OPENAI_KEY',
      args: ['exec', '--json', '--model', 'codex-model'],
      tokens: 240,
    },
    {
      type: 'gemini' as const,
      summary: 'Gemini found a README.',
      roles: ['user', 'assistant', 'tool', 'assistant'],
      secretVar: 'GEMINI_API_KEY',
      secret: 'value-of-GEMINI_KEY',
      args: ['--output-format', 'stream-json', '--yolo', '--model', 'gemini-model'],
      tokens: 330,
    },
  ];

  it.each(cases)(
    '$type: runs the CLI to SUCCEEDED with its conversation, usage and raw transcript',
    async (c) => {
      const runId = await start(c.type, `List the files for ${c.type}`);
      const run = await finished(runId);
      expect(run.state).toBe('SUCCEEDED');
      expect(run.status_message).toEqual({ message: c.summary });
      expect(run.request_usage.total_tokens).toBe(c.tokens);

      const invocation = JSON.parse(workspaceFile(runId, '.fake-cli-invocation.json'));
      expect(invocation.args).toEqual(expect.arrayContaining(c.args));
      expect(invocation.prompt).toContain(`List the files for ${c.type}`);
      expect(invocation.auth).toBe(c.secret);
      expect(invocation.env[c.secretVar]).toBe(c.secret);
      // Nothing of the server's own environment reaches the CLI.
      expect(invocation.env.AMBIENT_LEAK_CANARY).toBeUndefined();
      expect(invocation.env.DATABASE_URL).toBeUndefined();

      const conversation = await api.get(`/agent/runs/${runId}/conversation`);
      expect(conversation.status).toBe(200);
      type Message = {
        role: string;
        content: { type: string; text?: string; category?: string }[];
      };
      const messages = (conversation.body.steps[0].messages as Message[]).filter(
        (m) => m.role !== 'system',
      );
      expect(messages.map((m) => m.role)).toEqual(c.roles);
      expect(messages[1].content.map((b) => b.type)).toContain('action');
      expect(messages[2].content.map((b) => b.type)).toContain('action_result');
      // Each fake CLI runs a shell command: the Oz command category, not an integration.
      for (const block of [...messages[1].content, ...messages[2].content]) {
        if (block.type.startsWith('action')) expect(block.category).toBe('command');
      }
      expect(messages[3].content[0]).toMatchObject({ type: 'text', text: c.summary });

      const transcript = await api.transcriptText(runId);
      expect(transcript).toBe(workspaceFile(runId, '.fake-cli-stdout.jsonl'));
    },
  );

  it('claude in an allowlist environment gets a placeholder for its key (never the value) and the proxy variables', async () => {
    const created = await api.post('/agent/environments', {
      name: 'vendor-allowlist',
      network: 'allowlist',
      egress_allow: ['api.anthropic.com'],
    });
    expect(created.status).toBe(201);
    const runId = await start('claude', 'List the files for claude', {
      environment_id: created.body.uid,
    });
    expect((await finished(runId)).state).toBe('SUCCEEDED');
    const invocation = JSON.parse(workspaceFile(runId, '.fake-cli-invocation.json'));
    expect(invocation.auth).toMatch(/^ambient-secret-ANTHROPIC_KEY-[A-Za-z0-9_-]{32}$/);
    expect(invocation.env.HTTPS_PROXY).toBe('http://127.0.0.1:7172');
    expect(JSON.stringify(invocation)).not.toContain('value-of-ANTHROPIC_KEY');
  });

  it.each(['claude', 'codex', 'gemini'] as const)(
    "%s: gets the run's MCP servers in its own configuration, kept off the command line and removed after",
    async (type) => {
      const runId = await start(type, 'Use the tools [mcp]', { mcp_servers: MCP_SERVERS });
      const run = await finished(runId);
      // With its status message: why, when it did not succeed.
      expect({ state: run.state, status: run.status_message }).toMatchObject({
        state: 'SUCCEEDED',
      });
      // The fake CLI started the stdio server from the configuration and called its tools.
      expect(run.status_message.message).toBe(
        'echo: The sum is 5; ECHO_NAME=vendor-mcp\n' +
          'remote: https://mcp.example.test/mcp {"Authorization":"Bearer mcp-token"}',
      );
      const invocation = JSON.parse(workspaceFile(runId, '.fake-cli-invocation.json'));
      expect(JSON.stringify(invocation.args)).not.toContain('mcp-token');
      const configPath =
        type === 'claude'
          ? invocation.args[invocation.args.indexOf('--mcp-config') + 1]
          : type === 'codex'
            ? invocation.env.CODEX_HOME
            : invocation.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH;
      expect(configPath.startsWith(env.workspaceRoot)).toBe(false);
      expect(existsSync(configPath)).toBe(false);
    },
    90_000,
  );

  it('refuses an MCP server given by warp_id', async () => {
    const runId = await start('claude', 'Use the tools [mcp]', {
      mcp_servers: { warp: { warp_id: 'abc' } },
    });
    const run = await finished(runId);
    expect(run.state).toBe('FAILED');
    expect(run.status_message).toMatchObject({
      error_code: 'operation_not_supported',
      message: expect.stringContaining('MCP server "warp" uses warp_id'),
    });
  });

  it('a follow-up runs the CLI again with the conversation so far; the transcript keeps both streams', async () => {
    const runId = await start('claude', 'First question');
    expect((await finished(runId)).state).toBe('SUCCEEDED');
    const firstStream = workspaceFile(runId, '.fake-cli-stdout.jsonl');
    const followup = await api.post(`/agent/runs/${runId}/followups`, {
      message: 'Second question',
    });
    expect(followup.status).toBe(200);
    const run = await waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (r) =>
        r.state === 'SUCCEEDED' && workspaceFile(runId, '.fake-cli-stdout.jsonl') !== firstStream,
      { what: 'the second execution to finish' },
    );
    expect(run.status_message).toEqual({ message: 'The workspace has a README.' });
    const { prompt } = JSON.parse(workspaceFile(runId, '.fake-cli-invocation.json'));
    expect(prompt).toBe(
      'Conversation so far:\n\nUser: First question\n\nAssistant: Let me look at the workspace.' +
        '\n\nAssistant: The workspace has a README.\n\n---\n\nNew message from the user:\n\nSecond question',
    );
    const conversation = await api.get(`/agent/runs/${runId}/conversation`);
    expect(conversation.body.steps.map((s: { id: string }) => s.id)).toEqual([
      `${runId}:1`,
      `${runId}:2`,
    ]);
    const transcript = await api.transcriptText(runId);
    // The fake CLI appends to its stdout file, so after two executions it holds both streams.
    expect(transcript).toBe(workspaceFile(runId, '.fake-cli-stdout.jsonl'));
    expect(transcript.split('\n').filter(Boolean)).toHaveLength(10);
  });

  it('ends ERROR internal_error with the exit code and the last stderr lines when the CLI fails', async () => {
    const runId = await start('codex', 'Break [fail]');
    const run = await finished(runId);
    expect(run.state).toBe('ERROR');
    expect(run.status_message).toEqual({
      message: 'Codex exited with code 3:\nstarting\nfatal: the model refused the request',
      error_code: 'internal_error',
      retryable: true,
    });
  });

  it('ends FAILED external_authentication_required when the CLI says its key was refused', async () => {
    const runId = await start('claude', 'Log in [auth]');
    const run = await finished(runId);
    expect(run.state).toBe('FAILED');
    expect(run.status_message.error_code).toBe('external_authentication_required');
    expect(run.status_message.retryable).toBe(false);
    expect(run.status_message.message).toMatch(
      /^Claude Code exited with code 1: authentication failed; check the team secret ANTHROPIC_KEY \(harness_auth_secrets\.claude_auth_secret_name\):\n.*invalid x-api-key/,
    );
  });

  it('cancelling a run kills the CLI and everything it started', async () => {
    const runId = await start('gemini', 'Wait [hang]');
    await waitFor(
      async () => existsSync(join(env.workspaceRoot, runId, '.fake-cli-pids.json')),
      Boolean,
      { what: 'the fake CLI to start' },
    );
    // The CLI and its background child, as this host sees them (the sandbox hides host pids).
    expect(processesWithEnv('AMBIENT_RUN_ID', runId).length).toBeGreaterThanOrEqual(2);
    expect((await api.post(`/agent/runs/${runId}/cancel`)).status).toBe(200);
    expect((await finished(runId)).state).toBe('CANCELLED');
    await waitFor(
      async () => processesWithEnv('AMBIENT_RUN_ID', runId),
      (left) => left.length === 0,
      { what: 'the CLI and its child to be killed' },
    );
  });
});

describe('vendor CLI harnesses: missing CLI, missing secret', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('vendors-missing', model.url);
    app = await startTestApp(env, ['api', 'worker'], {
      'vendorClis.claudeBin': join(CLIS, 'no-such-claude'),
      'vendorClis.codexBin': join(CLIS, 'codex'),
      'runs.maxRunSeconds': 2,
    });
    api = apiClient(app.baseUrl, app.apiKey);
    expect((await api.post('/secrets', { name: 'KEY', value: 'v' })).status).toBe(201);
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  const run = async (config: Record<string, unknown>, prompt = 'Hello') => {
    const created = await api.post('/agent/runs', { prompt, config });
    expect(created.status).toBe(200);
    return waitFor(
      async () => (await api.get(`/agent/runs/${created.body.run_id}`)).body,
      (r) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(r.state),
      { what: 'the run to finish' },
    );
  };

  it('a CLI that is not installed gives a FAILED run that says what to configure', async () => {
    const failed = await run({
      harness: { type: 'claude' },
      harness_auth_secrets: { claude_auth_secret_name: 'KEY' },
    });
    expect(failed.state).toBe('FAILED');
    expect(failed.status_message.error_code).toBe('environment_setup_failed');
    expect(failed.status_message.message).toBe(
      `the claude harness needs the Claude Code CLI, but "${join(CLIS, 'no-such-claude')}" is not installed on this machine (set AMBIENT_CLAUDE_BIN)`,
    );
  });

  it('a missing or unnamed auth secret gives a FAILED run naming the field', async () => {
    const unknown = await run({
      harness: { type: 'codex' },
      harness_auth_secrets: { codex_auth_secret_name: 'NOPE' },
    });
    expect(unknown.state).toBe('FAILED');
    expect(unknown.status_message).toMatchObject({
      error_code: 'integration_not_configured',
      message: 'harness_auth_secrets.codex_auth_secret_name: there is no team secret named "NOPE"',
    });
    const unnamed = await run({ harness: { type: 'codex' } });
    expect(unnamed.state).toBe('FAILED');
    expect(unnamed.status_message.error_code).toBe('integration_not_configured');
    expect(unnamed.status_message.message).toContain(
      'config.harness_auth_secrets.codex_auth_secret_name',
    );
  });

  it('a CLI that runs past the maximum run time is killed and the run FAILS', async () => {
    const stopped = await run(
      { harness: { type: 'codex' }, harness_auth_secrets: { codex_auth_secret_name: 'KEY' } },
      'Never finish [hang]',
    );
    expect(stopped.state).toBe('FAILED');
    expect(stopped.status_message).toMatchObject({
      error_code: 'budget_exceeded',
      message: 'Codex was stopped: the run exceeded its maximum run time',
    });
  });
});
