/**
 * A person in the loop, end to end on both isolating backends (api + worker, a second API
 * replica, the fake model): a run whose tool call an approval rule asks about ends BLOCKED with
 * nothing left of its sandbox, and resumes in its kept workspace once someone decides: the
 * approved command runs exactly once even when two replicas approve at the same moment, a
 * denial reaches the model with its reason, a question is answered by a follow-up, a refused
 * host is approved for the rest of the run, and a blocked run holds no concurrency slot and can
 * be cancelled.
 */
import Dockerode from 'dockerode';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FakeModelServer, FakeStep, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { AGENT_IMAGE, BUILD_AGENT_IMAGE } from './support/docker-sandbox';
import { processesMentioning } from './support/processes';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';

/** Listed in AMBIENT_EGRESS_ALLOW (the guard lets it through) but in no environment's rules. */
const UNLISTED_HOST = '127.0.0.5';
/** A sandbox through the egress proxy, on a machine running other suites. */
const SLOW = { timeoutMs: 120_000, intervalMs: 100 };

const docker = new Dockerode();

type Api = ReturnType<typeof apiClient>;

describe.each(['bubblewrap', 'docker'] as const)('approvals in the sandbox (%s)', (backend) => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let replica: TestApp;
  let api: Api;
  let replicaApi: Api;
  let upstream: Server;
  let port: number;
  /** An allowlist environment (no hosts) whose rules ask about `append-me` commands and egress. */
  let environmentId: string;
  const sandboxSettings = {
    'sandbox.backend': backend,
    'sandbox.readonlyPaths': '',
    'sandbox.docker.defaultImage': AGENT_IMAGE,
    // The notification endpoint's address too (nothing listens there: deliveries are logged).
    'egress.allow': `${UNLISTED_HOST},127.0.0.1:9`,
  };

  beforeAll(async () => {
    if (backend === 'docker') {
      await promisify(execFile)(BUILD_AGENT_IMAGE, ['--tag', AGENT_IMAGE], {
        maxBuffer: 16 << 20,
      });
    }
    upstream = createServer((req, res) =>
      res.end(`answered by ${req.socket.localAddress?.replace(/^::ffff:/, '')}\n`),
    );
    await new Promise<void>((done) => upstream.listen(0, '0.0.0.0', done));
    port = (upstream.address() as AddressInfo).port;
    model = await startFakeModelServer();
    env = createTestEnvironment(`approvals_${backend}`, model.url);
    app = await startTestApp(env, ['api', 'worker'], sandboxSettings);
    replica = await startTestApp(env, ['api']);
    api = apiClient(app.baseUrl, app.apiKey);
    replicaApi = apiClient(replica.baseUrl, replica.apiKey);
    const created = await api.post('/agent/environments', {
      name: `approvals-${backend}`,
      network: 'allowlist',
      egress_allow: [],
      approvals: [
        { command: 'append-me', effect: 'ask' },
        { egress: 'unlisted', effect: 'ask' },
      ],
    });
    expect(created.status).toBe(201);
    environmentId = created.body.uid as string;
  }, 600_000);

  afterAll(async () => {
    await replica?.close();
    await app?.close();
    await env?.destroy();
    await model?.close();
    await new Promise((done) => upstream?.close(done));
  });

  /** Starts a run of `steps` in the environment; its id. */
  async function startRun(steps: FakeStep[], config: Record<string, unknown> = {}) {
    const script = `ap-${Math.random().toString(36).slice(2)}`;
    model.script(script, steps);
    const created = await api.post('/agent/runs', {
      prompt: `[script:${script}]`,
      config: { environment_id: environmentId, ...config },
    });
    expect(created.status).toBe(200);
    return { runId: created.body.run_id as string, script };
  }

  const run = async (runId: string) => (await api.get(`/agent/runs/${runId}`)).body;

  const reached = (runId: string, states: string[]) =>
    waitFor(
      () => run(runId),
      (r) => states.includes(r.state),
      {
        ...SLOW,
        what: `run ${runId} to reach ${states.join(' or ')}`,
      },
    );

  /** Waits for BLOCKED and for every trace of the sandbox to be gone, still BLOCKED then. */
  async function blockedWithoutSandbox(runId: string) {
    const blocked = await reached(runId, ['BLOCKED', 'SUCCEEDED', 'FAILED', 'ERROR']);
    expect(blocked).toMatchObject({ state: 'BLOCKED' });
    await waitFor(
      async () => processesMentioning(runId),
      (pids) => pids.length === 0,
      { what: `the processes of run ${runId} to end` },
    );
    if (backend === 'docker') {
      await waitFor(
        // By name: a warm pool's container takes the execution's name at hand-out.
        () => docker.listContainers({ all: true, filters: { name: [`ambient-${runId}-`] } }),
        (containers) => containers.length === 0,
        { what: `the containers of run ${runId} to be removed` },
      );
    }
    expect((await run(runId)).state).toBe('BLOCKED');
    return blocked;
  }

  /** The run's one pending request, as the API lists it. */
  async function pendingRequest(runId: string) {
    const listed = await api.get(`/agent/runs/${runId}/approvals`);
    expect(listed.status).toBe(200);
    const pending = (listed.body.approvals as Record<string, unknown>[]).filter(
      (a) => a.decision === null,
    );
    expect(pending).toHaveLength(1);
    return pending[0];
  }

  /** The messages the model received at `step` of the script (0: the first request). */
  const messagesAt = (script: string, step: number) =>
    model.requests.find((r) => r.script === script && r.step === step)?.body.messages ?? [];
  const toolOutputs = (script: string, step: number) =>
    messagesAt(script, step)
      .filter((m) => m.role === 'tool')
      .map((m) => String(m.content));

  const command = (line: string): FakeStep => ({
    toolCalls: [{ name: 'run_command', arguments: { command: line } }],
  });

  it('blocks with no sandbox left, and runs the approved command exactly once when two replicas approve at once', async () => {
    const endpoint = await api.post('/notification-endpoints', {
      url: 'http://127.0.0.1:9/hook',
      events: ['run.blocked', 'approval.requested'],
    });
    expect(endpoint.status).toBe(201);
    const { runId, script } = await startRun([
      {
        toolCalls: [
          { name: 'run_command', arguments: { command: 'echo first >> order.txt' } },
          {
            name: 'run_command',
            arguments: { command: 'echo append-me >> count.txt; echo appended' },
          },
          { name: 'run_command', arguments: { command: 'echo after >> order.txt' } },
        ],
      },
      command('echo "lines:$(wc -l < count.txt)"; cat order.txt'),
      { text: 'done' },
    ]);
    const blocked = await blockedWithoutSandbox(runId);
    const request = await pendingRequest(runId);
    expect(request).toMatchObject({
      kind: 'approval',
      tool: 'run_command',
      arguments: { command: 'echo append-me >> count.txt; echo appended' },
      rule: { command: 'append-me', effect: 'ask' },
    });
    expect(blocked.status_message).toMatchObject({
      message: 'Waiting for approval: run_command: echo append-me >> count.txt; echo appended',
      pending_approval_id: request.id,
    });
    // The command the rule asks about has not run; the one before it has.
    expect(existsSync(join(env.workspaceRoot, runId, 'count.txt'))).toBe(false);
    const deliveries = (await api.get(`/notification-endpoints/${endpoint.body.id}/deliveries`))
      .body.deliveries as {
      event: string;
      payload: { data: { run: { id: string; state: string }; approval?: { id: string } } };
    }[];
    expect(
      deliveries
        .map((d) => [
          d.event,
          d.payload.data.run.id,
          d.payload.data.run.state,
          d.payload.data.approval?.id,
        ])
        .sort(),
    ).toEqual([
      ['approval.requested', runId, 'BLOCKED', request.id],
      ['run.blocked', runId, 'BLOCKED', undefined],
    ]);
    expect((await api.delete(`/notification-endpoints/${endpoint.body.id}`)).status).toBe(204);

    const decide = (client: Api) =>
      client.post(`/agent/runs/${runId}/approvals/${request.id}`, { decision: 'approve' });
    const answers = await Promise.all([decide(api), decide(replicaApi)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);

    expect(await reached(runId, ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED'])).toMatchObject({
      state: 'SUCCEEDED',
    });
    // The approved command's output is in the conversation the model continued with.
    const resumed = toolOutputs(script, 1);
    expect(resumed).toHaveLength(3);
    expect(JSON.parse(resumed[1])).toMatchObject({ exit_code: 0, output: 'appended\n' });
    const [check] = toolOutputs(script, 2).slice(-1);
    expect(JSON.parse(check).output).toBe('lines:1\nfirst\nafter\n');
    expect(readFileSync(join(env.workspaceRoot, runId, 'count.txt'), 'utf8')).toBe('append-me\n');
  });

  it('tells the model a denial and its reason, and runs nothing', async () => {
    const { runId, script } = await startRun([
      command('echo append-me >> denied.txt'),
      { text: 'understood' },
    ]);
    await blockedWithoutSandbox(runId);
    const request = await pendingRequest(runId);
    const denied = await replicaApi.post(`/agent/runs/${runId}/approvals/${request.id}`, {
      decision: 'deny',
      comment: 'not on a Friday',
    });
    expect(denied.status).toBe(200);
    expect(await reached(runId, ['SUCCEEDED', 'FAILED', 'ERROR'])).toMatchObject({
      state: 'SUCCEEDED',
    });
    const [result] = toolOutputs(script, 1);
    expect(result).toMatch(
      /^Denied: .* denied this call, so it was not run\. Their reason: not on a Friday$/,
    );
    expect(existsSync(join(env.workspaceRoot, runId, 'denied.txt'))).toBe(false);
  });

  it('waits for the answer to an ask_user question, which a follow-up gives', async () => {
    const { runId, script } = await startRun([
      { toolCalls: [{ name: 'ask_user', arguments: { question: 'Which branch?' } }] },
      command('echo "branch chosen"'),
      { text: 'done' },
    ]);
    const blocked = await blockedWithoutSandbox(runId);
    expect(blocked.status_message.message).toBe('Waiting for an answer: Which branch?');
    const followup = await api.post(`/agent/runs/${runId}/followups`, { message: 'release-2' });
    expect(followup.status).toBe(200);
    expect(await reached(runId, ['SUCCEEDED', 'FAILED', 'ERROR'])).toMatchObject({
      state: 'SUCCEEDED',
    });
    const [answer] = toolOutputs(script, 1);
    expect(answer).toMatch(/ answered: release-2$/);
    // The answer is the question's result, not an extra user turn.
    expect(messagesAt(script, 1).filter((m) => m.content === 'release-2')).toEqual([]);
  });

  it('asks about a host outside the allowlist, and lets the run reach it once approved', async () => {
    const url = `http://${UNLISTED_HOST}:${port}/`;
    const curl = `curl -s -o /dev/null -w '%{http_code}' --max-time 10 ${url}; echo; curl -sS --max-time 10 ${url} || true`;
    const { runId, script } = await startRun([command(curl), command(curl), { text: 'done' }]);
    await blockedWithoutSandbox(runId);
    const request = await pendingRequest(runId);
    expect(request).toMatchObject({
      tool: 'egress',
      arguments: { host: UNLISTED_HOST, port },
      rule: { egress: 'unlisted', effect: 'ask' },
    });
    // The model waits too: it was asked once, for the call whose curl was refused.
    expect(model.requests.filter((r) => r.script === script)).toHaveLength(1);
    expect(
      (await api.post(`/agent/runs/${runId}/approvals/${request.id}`, { decision: 'approve' }))
        .status,
    ).toBe(200);
    expect(await reached(runId, ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED'])).toMatchObject({
      state: 'SUCCEEDED',
    });
    const [refused] = toolOutputs(script, 1);
    expect(JSON.parse(refused).output).toMatch(/^403\n/);
    expect(messagesAt(script, 1).at(-1)).toMatchObject({
      role: 'user',
      content: expect.stringContaining(`approved egress to ${UNLISTED_HOST}:${port}`),
    });
    const [retried] = toolOutputs(script, 2).slice(-1);
    expect(JSON.parse(retried).output).toBe(`200\nanswered by ${UNLISTED_HOST}\n`);
  });

  it('holds no concurrency slot while blocked, and can be cancelled then', async () => {
    expect((await api.put('/limits', { max_concurrent_runs: 1 })).status).toBe(200);
    try {
      const blocked = await startRun([command('echo append-me')]);
      await blockedWithoutSandbox(blocked.runId);
      const other = await startRun([command('echo other'), { text: 'other done' }]);
      expect(await reached(other.runId, ['SUCCEEDED', 'FAILED', 'ERROR'])).toMatchObject({
        state: 'SUCCEEDED',
      });
      expect((await run(blocked.runId)).state).toBe('BLOCKED');
      expect((await api.post(`/agent/runs/${blocked.runId}/cancel`)).status).toBe(200);
      expect(await reached(blocked.runId, ['CANCELLED'])).toMatchObject({ state: 'CANCELLED' });
      expect(processesMentioning(blocked.runId)).toEqual([]);
      // Nothing asked ever ran: the model was called once, for the call that asked.
      expect(model.requests.filter((r) => r.script === blocked.script)).toHaveLength(1);
    } finally {
      await api.put('/limits', { max_concurrent_runs: null });
    }
  });

  it('expires a run nobody decides, and a follow-up continues it without running the call', async () => {
    const { runId, script } = await startRun([
      command('echo append-me >> expired.txt'),
      { text: 'understood' },
    ]);
    await blockedWithoutSandbox(runId);
    // A worker whose blocked timeout has passed for this run: its sweep fails the run.
    const expirer = await startTestApp(env, ['worker'], {
      ...sandboxSettings,
      'runs.blockedTimeoutSeconds': 1,
    });
    try {
      expect(await reached(runId, ['FAILED', 'ERROR', 'SUCCEEDED'])).toMatchObject({
        state: 'FAILED',
        status_message: { error_code: 'approval_timeout' },
      });
    } finally {
      await expirer.close();
    }
    expect((await api.post(`/agent/runs/${runId}/followups`, { message: 'go on' })).status).toBe(
      200,
    );
    expect(await reached(runId, ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED'])).toMatchObject({
      state: 'SUCCEEDED',
    });
    expect(toolOutputs(script, 1)).toEqual([
      expect.stringMatching(
        /^Denied: Ambient denied this call, so it was not run\. Their reason: /,
      ),
    ]);
    expect(messagesAt(script, 1).at(-1)).toMatchObject({ role: 'user', content: 'go on' });
    expect(existsSync(join(env.workspaceRoot, runId, 'expired.txt'))).toBe(false);
  });
});
