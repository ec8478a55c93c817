/**
 * A run's commands against both isolating backends, end to end (api + worker, fake model):
 * the escapes a scripted run used to make from its workspace all fail, while the same run still
 * clones its repository, runs setup, writes files a follow-up sees, and reaches the API with its
 * own key. Limits and cancel end what they should. Every sandbox has network `none` (the other
 * modes are in sandbox-egress.e2e-spec.ts).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import Dockerode from 'dockerode';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { bareRepo } from './support/git-repos';
import { processesWithEnv } from './support/processes';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';

const IMAGE = 'ambient-agent:bookworm';
const BUILD_IMAGE = resolve(__dirname, '..', 'sandbox', 'agent-image', 'build-image.sh');
/** Put in this (the service's) process environment: no sandboxed command may read it. */
const CANARY = `canary-${process.pid}-${Date.now()}`;
const docker = new Dockerode();

/** The escapes of the issue, each printing ESCAPED:<name> only when it works. */
const PROBES = [
  `cat /proc/${process.pid}/environ 2>/dev/null | tr '\\0' '\\n' | grep -q AMBIENT_SANDBOX_CANARY && echo ESCAPED:service-environ`,
  `grep -l ${CANARY} /proc/*/environ 2>/dev/null | grep -q . && echo ESCAPED:any-environ`,
  `(exec 3<>/dev/tcp/127.0.0.1/3306) 2>/dev/null && echo ESCAPED:mysql`,
  `(exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null && echo ESCAPED:redis`,
  `ls /proc/${process.pid}/cwd/config 2>/dev/null | grep -q . && echo ESCAPED:service-cwd`,
  `cat ${resolve(__dirname, '..', 'config', 'default.yaml')} 2>/dev/null | grep -q . && echo ESCAPED:service-files`,
  `find / -name 'marker-of-the-other-run' 2>/dev/null | grep -q . && echo ESCAPED:other-workspace`,
  `echo "uid=$(id -u) pwd=$PWD caps=$(grep CapEff /proc/self/status | tr -d '\\t')"`,
].join('; ');

describe.each(['bubblewrap', 'docker'] as const)('runs in %s sandboxes', (backend) => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let gitRoot: string;

  beforeAll(async () => {
    process.env.AMBIENT_SANDBOX_CANARY = CANARY;
    if (backend === 'docker') {
      // Cached by tag: a no-op once .ci/run (or an earlier test) built it.
      await promisify(execFile)(BUILD_IMAGE, ['--tag', IMAGE], { maxBuffer: 16 << 20 });
    }
    gitRoot = mkdtempSync(join(tmpdir(), 'ambient-iso-git-'));
    bareRepo(gitRoot, 'acme', 'web', { 'README.md': 'hello from the repository\n' });
    model = await startFakeModelServer();
    env = createTestEnvironment(`iso_${backend}`, model.url);
    app = await startTestApp(env, ['api', 'worker'], {
      'sandbox.backend': backend,
      // Nothing of the host beyond the system directories (the test fixtures are not needed).
      'sandbox.readonlyPaths': '',
      'sandbox.docker.defaultImage': IMAGE,
      'environments.gitUrlBase': gitRoot,
    });
    api = apiClient(app.baseUrl, app.apiKey);
  }, 600_000);

  afterAll(async () => {
    delete process.env.AMBIENT_SANDBOX_CANARY;
    await app?.close();
    await env?.destroy();
    await model?.close();
    rmSync(gitRoot, { recursive: true, force: true });
  });

  const ended = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { timeoutMs: 60_000, what: `run ${runId} to end` },
    );

  /** The results of the run_command calls the model saw, in order. */
  const commandResults = (script: string) =>
    model.requests
      .filter((r) => r.script === script)
      .flatMap((r) => r.body.messages.filter((m) => m.role === 'tool'))
      .map((m) => JSON.parse(String(m.content)) as Record<string, unknown>)
      .filter(
        (result, i, all) =>
          all.findIndex((o) => JSON.stringify(o) === JSON.stringify(result)) === i,
      );

  const command = (text: string) => ({
    toolCalls: [{ name: 'run_command', arguments: { command: text } }],
  });

  async function environment(body: Record<string, unknown>): Promise<string> {
    const created = await api.post('/agent/environments', { name: `env-${Date.now()}`, ...body });
    expect(created.status).toBe(201);
    return created.body.uid as string;
  }

  it('reports the backend in use', async () => {
    const health = await api.get('/health');
    expect(health.body.sandbox).toEqual({ backend, isolated: true });
  });

  it('gets none of the escapes, yet clones, sets up, reaches the API with its key and keeps files for a follow-up', async () => {
    model.script(`mark-${backend}`, [command('touch marker-of-the-other-run'), { text: 'marked' }]);
    const other = await api.post('/agent/runs', { prompt: `[script:mark-${backend}]` });
    expect((await ended(other.body.run_id)).state).toBe('SUCCEEDED');

    const uid = await environment({
      github_repos: [{ owner: 'acme', repo: 'web' }],
      setup_commands: ['cp web/README.md setup-copy.txt'],
    });
    const script = `probe-${backend}`;
    model.script(script, [
      command(PROBES),
      command(
        'cat setup-copy.txt; echo kept > written.txt; ' +
          'curl -sS -o /dev/null -w "api:%{http_code}" -X POST "$AMBIENT_API_URL/harness-support/artifacts" ' +
          '-H "Authorization: Bearer $AMBIENT_RUN_KEY" -H "Content-Type: application/json" ' +
          `-d '{"artifact_type":"SCREENSHOT","mime_type":"image/png","content_base64":"ZmFrZQ=="}'`,
      ),
      { text: 'probed' },
      command('cat written.txt web/README.md'),
      { text: 'continued' },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: `[script:${script}]`,
      config: { environment_id: uid },
    });
    const runId = created.body.run_id as string;
    expect((await ended(runId)).state).toBe('SUCCEEDED');
    const [probes, work] = commandResults(script);
    expect(probes.output).not.toContain('ESCAPED');
    expect(probes.output).toMatch(/uid=1000 pwd=\/workspace caps=CapEff:0000000000000000/);
    // The run-scoped API through the bridge: the artifact is the run's.
    expect(work.output).toMatch(/^hello from the repository\napi:20[01]$/);
    expect((await api.get(`/agent/runs/${runId}`)).body.artifacts).toHaveLength(1);

    const followup = await api.post(`/agent/runs/${runId}/followups`, { message: 'go on' });
    expect(followup.status).toBe(200);
    await waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => run.state === 'SUCCEEDED' && run.status_message?.message === 'continued',
      { timeoutMs: 60_000, what: 'the follow-up to finish' },
    );
    expect(commandResults(script)[2].output).toBe('kept\nhello from the repository\n');
  });

  it('ends a memory hog with a clear message in the tool result and on the timeline', async () => {
    const uid = await environment({ resources: { memory_mb: 64 } });
    const script = `hog-${backend}`;
    model.script(script, [
      command('x=$(head -c 300000000 /dev/zero | tr "\\0" a); echo survived ${#x}'),
      command('echo still-works'),
      { text: 'done' },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: `[script:${script}]`,
      config: { environment_id: uid },
    });
    const runId = created.body.run_id as string;
    await ended(runId);
    const [hog, after] = commandResults(script);
    expect(hog.output).not.toContain('survived');
    expect(hog.killed).toBe("out of memory: the sandbox's memory limit is 64 MiB");
    expect(after.output).toBe('still-works\n');
    const timeline = (await api.get(`/agent/runs/${runId}/timeline`)).body.events;
    expect(timeline).toContainEqual(
      expect.objectContaining({
        event_type: 'sandbox_limit_reached',
        payload: { reason: "out of memory: the sandbox's memory limit is 64 MiB" },
      }),
    );
  });

  it('contains a fork bomb: the command ends, the next one runs', async () => {
    const uid = await environment({ resources: { pids: 64 } });
    const script = `bomb-${backend}`;
    model.script(script, [
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: { command: 'b(){ b|b& }; b; sleep 2; echo bombed', timeout_seconds: 10 },
          },
        ],
      },
      command('echo alive'),
      { text: 'done' },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: `[script:${script}]`,
      config: { environment_id: uid },
    });
    expect((await ended(created.body.run_id)).state).toBe('SUCCEEDED');
    const [, after] = commandResults(script);
    expect(after.output).toBe('alive\n');
    // Nothing of the bomb outlives its command. Docker's killer takes the command's group from a
    // FIFO, so the last forks can still be dying when the run ends: they must be gone soon after.
    await waitFor(
      async () => processesWithEnv('AMBIENT_RUN_ID', created.body.run_id),
      (left) => left.length === 0,
      { timeoutMs: 10_000, what: "the bomb's processes to be gone" },
    );
  });

  it("ends a command's background processes with it", async () => {
    const script = `background-${backend}`;
    model.script(script, [
      command('sleep 300 & echo started'),
      // Docker's killer takes the group from a FIFO and docker-init reaps it: the sleep may take a
      // moment to be gone. Live sleeps only (a zombie is dead), looked at for up to 10 s.
      command(
        'for i in $(seq 100); do n=$(ps -e -o stat=,comm= | awk \'$1 !~ /^Z/ && $2 == "sleep"\' | wc -l); ' +
          '[ "$n" = 0 ] && break; sleep 0.1; done; echo "$n"',
      ),
      { text: 'done' },
    ]);
    const created = await api.post('/agent/runs', { prompt: `[script:${script}]` });
    expect((await ended(created.body.run_id)).state).toBe('SUCCEEDED');
    const [started, left] = commandResults(script);
    expect(started.output).toBe('started\n');
    expect(left.output).toBe('0\n');
  });

  it('stops everything at once on cancel', async () => {
    const script = `cancel-${backend}`;
    model.script(script, [command('sleep 300 & sleep 300'), { text: 'never' }]);
    const created = await api.post('/agent/runs', { prompt: `[script:${script}]` });
    const runId = created.body.run_id as string;
    await waitFor(
      async () => processesWithEnv('AMBIENT_RUN_ID', runId).length,
      (count) => count >= 2,
      { what: 'the sleeps to start' },
    );
    expect((await api.post(`/agent/runs/${runId}/cancel`)).status).toBe(200);
    await waitFor(
      async () => processesWithEnv('AMBIENT_RUN_ID', runId).length,
      (count) => count === 0,
      { timeoutMs: 10_000, what: 'every process of the run to end' },
    );
    if (backend === 'docker') {
      await waitFor(
        // By name: a container from the warm pool carries no run label, but takes the
        // execution's name (ambient-<run>-<execution>) at hand-out.
        () => docker.listContainers({ all: true, filters: { name: [`ambient-${runId}-`] } }),
        (containers) => containers.length === 0,
        { timeoutMs: 10_000, what: "the run's container to be removed" },
      );
    }
  });
});

describe('without a working sandbox backend', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  const dockerHost = process.env.DOCKER_HOST;

  beforeAll(async () => {
    // No daemon answers here: AMBIENT_SANDBOX=docker cannot isolate anything.
    process.env.DOCKER_HOST = 'unix:///nonexistent/docker.sock';
    model = await startFakeModelServer();
    env = createTestEnvironment('iso_none', model.url);
    app = await startTestApp(env, ['api', 'worker'], { 'sandbox.backend': 'docker' });
    api = apiClient(app.baseUrl, app.apiKey);
  });

  afterAll(async () => {
    if (dockerHost === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = dockerHost;
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  it('never runs unisolated: the run ends in ERROR saying how to fix it, and health says so', async () => {
    model.script('no-sandbox', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'touch ran' } }] },
    ]);
    const created = await api.post('/agent/runs', { prompt: '[script:no-sandbox]' });
    const run = await waitFor(
      async () => (await api.get(`/agent/runs/${created.body.run_id}`)).body,
      (r) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(r.state),
      { what: 'the run to end' },
    );
    expect(run.state).toBe('ERROR');
    expect(run.status_message).toMatchObject({
      error_code: 'resource_unavailable',
      message: expect.stringMatching(
        /AMBIENT_SANDBOX=docker but no Docker daemon answers.*install Docker.*bubblewrap.*AMBIENT_SANDBOX=process/,
      ),
    });
    expect(model.requests.filter((r) => r.script === 'no-sandbox')).toHaveLength(0);
    const health = await api.get('/health');
    expect(health.body.sandbox).toMatchObject({ backend: 'unavailable', isolated: false });
  });
});
