import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startUpstreams } from './support/egress-upstreams';
import { scrape } from './support/prometheus';
import { GitHttpServer, startGitHttpServer } from './support/git-http-server';
import { bareRepo } from './support/git-repos';
import { SelfHostedWorkers } from './support/self-hosted-worker-process';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

const CLIS = resolve(__dirname, 'fixtures/vendor-clis');
const TOKEN = 'ghp_selfhosted_private_token';
/**
 * Bounds, not expectations: a run here goes through a worker process and its sandbox; the memory
 * probe took 30 s at load 12 (a few seconds quiet), past waitFor's 20 s and near jest's 60 s.
 */
const RUN_END_TIMEOUT_MS = 90_000;
jest.setTimeout(150_000);

/**
 * Self-hosted runs prepared and executed like service-hosted ones, by the real worker program:
 * the environment's repositories are cloned and its setup commands run on the worker's machine,
 * the timeline and the outcome are recorded on the server, and `config.harness.type` picks the
 * harness (vendor CLIs included).
 */
describe('self-hosted runs: environments and harnesses on the worker', () => {
  let git: GitHttpServer;
  let workerRoot: string;
  let mirrorRoot: string;
  const gitRoot = mkdtempSync(join(tmpdir(), 'ambient-sh-git-'));
  const privateRoot = mkdtempSync(join(tmpdir(), 'ambient-sh-private-git-'));
  const workers = new SelfHostedWorkers();

  const startWorker = (workerId: string, workspaceRoot: string, extra: string[] = [], vars = {}) =>
    workers.start({
      apiUrl: app.baseUrl,
      workerId,
      workspaceRoot,
      modelsFile: env.modelsFile,
      extra,
      vars,
    });
  const run = (runId: string) => api.get(`/agent/runs/${runId}`).then((r) => r.body);
  const finished = (runId: string) =>
    waitFor(
      () => run(runId),
      (r) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(r.state),
      { timeoutMs: RUN_END_TIMEOUT_MS, what: `run ${runId} to end` },
    );
  const create = async (prompt: string, config: Record<string, unknown>) => {
    const created = await api.post('/agent/runs', { prompt, config });
    expect(created.status).toBe(200);
    return created.body.run_id as string;
  };
  const environment = async (body: Record<string, unknown>) => {
    const created = await api.post('/agent/environments', body);
    expect(created.status).toBe(201);
    return created.body.uid as string;
  };
  const eventTypes = async (runId: string) =>
    ((await api.get(`/agent/runs/${runId}/timeline`)).body.events as { event_type: string }[]).map(
      (e) => e.event_type,
    );
  const setupFailed = async (uid: string) =>
    (await api.get(`/agent/environments/${uid}`)).body.setup_failed;

  beforeAll(async () => {
    bareRepo(gitRoot, 'acme', 'web', { 'README.md': 'hello from the web repo\n' });
    bareRepo(privateRoot, 'acme', 'private', { 'SECRET.md': 'internal notes\n' });
    git = await startGitHttpServer(privateRoot, TOKEN);
    workerRoot = mkdtempSync(join(tmpdir(), 'ambient-sh-ws-'));
    mirrorRoot = mkdtempSync(join(tmpdir(), 'ambient-sh-mirror-ws-'));
  });

  afterAll(async () => {
    await workers.killAll();
  });

  const { model, env, app, api } = useTestApp('shenv', ['api', 'worker'], {
    'environments.gitUrlBase': gitRoot,
  });

  beforeAll(async () => {
    for (const [name, value] of [
      ['DEPLOY_KEY', 'deploy-key-value'],
      ['ANTHROPIC_KEY', 'value-of-ANTHROPIC_KEY'],
      ['GITHUB_TOKEN', TOKEN],
    ]) {
      expect((await api.post('/secrets', { name, value })).status).toBe(201);
    }
    await startWorker('env-box', workerRoot, [], {
      AMBIENT_CLAUDE_BIN: join(CLIS, 'claude'),
      AMBIENT_GEMINI_BIN: join(CLIS, 'no-such-gemini'),
    });
  });

  afterAll(async () => {
    await git?.close();
    for (const dir of [gitRoot, privateRoot, workerRoot, mirrorRoot]) {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });

  it("executes in a sandbox of the worker's machine, with the environment's limits", async () => {
    const uid = await environment({ name: 'boxed', resources: { memory_mb: 64 } });
    model.script('sh-sandbox', [
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: {
              command:
                'echo "uid=$(id -u) pwd=$PWD"; (exec 3<>/dev/tcp/127.0.0.1/3306) 2>/dev/null && echo ESCAPED; ' +
                'x=$(head -c 150000000 /dev/zero | tr "\\0" a); echo survived',
            },
          },
        ],
      },
      { text: 'boxed in' },
    ]);
    const runId = await create('Probe [script:sh-sandbox]', {
      worker_host: 'env-box',
      environment_id: uid,
    });
    expect((await finished(runId)).state).toBe('SUCCEEDED');
    const [result] = model.requests
      .filter((r) => r.script === 'sh-sandbox')
      .at(-1)!
      .body.messages.filter((m) => m.role === 'tool')
      .map((m) => JSON.parse(String(m.content)) as { output: string; killed?: string });
    expect(result.output).toContain('uid=1000 pwd=/workspace');
    expect(result.output).not.toContain('ESCAPED');
    expect(result.output).not.toContain('survived');
    expect(result.killed).toBe("out of memory: the sandbox's memory limit is 64 MiB");
  });

  it("clones and sets up on the worker; the agent reads the repository and the setup's output", async () => {
    const uid = await environment({
      name: 'web',
      github_repos: [{ owner: 'acme', repo: 'web' }],
      setup_commands: ['echo "setup saw $DEPLOY_KEY" > setup.txt', 'ls web > listing.txt'],
    });
    model.script('sh-env', [
      { toolCalls: [{ name: 'read_file', arguments: { path: 'web/README.md' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'cat setup.txt listing.txt' } }] },
      { text: 'The repository greets and the setup ran.' },
    ]);
    const runId = await create('Look around [script:sh-env]', {
      worker_host: 'env-box',
      environment_id: uid,
      secrets: [{ name: 'DEPLOY_KEY' }],
    });
    const done = await finished(runId);
    expect(done.state).toBe('SUCCEEDED');
    expect(done.status_message).toEqual({ message: 'The repository greets and the setup ran.' });

    const toolResults = model.requests
      .filter((r) => r.script === 'sh-env')
      .at(-1)!
      .body.messages.filter((m) => m.role === 'tool')
      .map((m) => String(m.content));
    expect(toolResults[0]).toContain('hello from the web repo');
    expect(toolResults[1]).toContain('setup saw deploy-key-value');
    expect(toolResults[1]).toContain('README.md');

    // Prepared on the worker's machine; nothing on the server's.
    expect(readFileSync(join(workerRoot, runId, 'web', 'README.md'), 'utf8')).toBe(
      'hello from the web repo\n',
    );
    expect(existsSync(join(env.workspaceRoot, runId))).toBe(false);
    expect(await eventTypes(runId)).toEqual([
      'oz_run_created',
      'oz_run_claimed',
      'agent_started',
      'environment_setup_started',
      'repository_cloned',
      'setup_command_started',
      'setup_command_succeeded',
      'setup_command_started',
      'setup_command_succeeded',
      'worker_container_ready',
      'command_started',
      'command_output',
      'command_finished',
      'oz_run_done',
    ]);
    expect(await setupFailed(uid)).toBe(false);

    // A follow-up continues in the prepared workspace without setting it up again.
    model.script('sh-env-2', [{ text: 'Still here.' }]);
    await api.post(`/agent/runs/${runId}/followups`, { message: 'again [script:sh-env-2]' });
    await waitFor(
      () => eventTypes(runId),
      (types) => types.filter((t) => t === 'oz_run_done').length === 2,
      { what: 'the continuation to finish' },
    );
    const types = await eventTypes(runId);
    expect(types.filter((t) => t === 'environment_setup_started')).toHaveLength(1);
  });

  it('fails the run environment_setup_failed with the exit code; the environment is marked', async () => {
    const uid = await environment({
      name: 'broken',
      setup_commands: ['echo "cannot reach registry"; exit 7'],
      failure_session_retention_minutes: 5,
    });
    const runId = await create('never starts [script:sh-never]', {
      worker_host: 'env-box',
      environment_id: uid,
    });
    const failed = await finished(runId);
    expect(failed.state).toBe('FAILED');
    expect(failed.status_message).toEqual({
      message:
        'environment setup failed: setup command 1 (echo "cannot reach registry"; exit 7) ' +
        'exited with code 7\ncannot reach registry',
      error_code: 'environment_setup_failed',
      retryable: false,
      exit_code: 7,
    });
    expect(await setupFailed(uid)).toBe(true);
    expect(model.requests.some((r) => r.script === 'sh-never')).toBe(false);
    // No debug window for a self-hosted run: the worker removed the workspace.
    expect(existsSync(join(workerRoot, runId))).toBe(false);
    expect(await eventTypes(runId)).toEqual([
      'oz_run_created',
      'oz_run_claimed',
      'agent_started',
      'environment_setup_started',
      'setup_command_started',
      'command_output',
      'setup_command_failed',
      'oz_run_failed',
    ]);

    // A follow-up takes the ordinary continuation, which prepares the workspace again.
    const followup = await api.post(`/agent/runs/${runId}/followups`, { message: 'retry' });
    expect(followup.body.outcome).toBe('handoff_execution');
    expect(followup.body.debug_agent_active).toBeUndefined();
    await waitFor(
      () => eventTypes(runId),
      (types) => types.filter((t) => t === 'oz_run_failed').length === 2,
      { what: 'the continuation to fail its setup again' },
    );

    // A successful setup clears the mark.
    const patched = await api
      .raw()
      .patch(`${api.prefix}/agent/environments/${uid}`)
      .set('Authorization', `Bearer ${app.apiKey}`)
      .send({ setup_commands: ['true'] });
    expect(patched.status).toBe(200);
    const fixed = await finished(
      await create('works now', { worker_host: 'env-box', environment_id: uid }),
    );
    // The whole status on a failure: it says which step failed and how.
    expect({ state: fixed.state, status_message: fixed.status_message }).toEqual({
      state: 'SUCCEEDED',
      status_message: { message: 'Done.' },
    });
    expect(await setupFailed(uid)).toBe(false);
  });

  it("clones a private repository from the worker's own --git-url-base with the team token", async () => {
    await startWorker('mirror-box', mirrorRoot, ['--git-url-base', git.url]);
    const uid = await environment({
      name: 'private',
      github_repos: [{ owner: 'acme', repo: 'private' }],
      setup_commands: ['env > seen-env.txt'],
    });
    const done = await finished(
      await create('go', { worker_host: 'mirror-box', environment_id: uid }),
    );
    expect(done.state).toBe('SUCCEEDED');
    const dir = join(mirrorRoot, done.run_id);
    // Only the worker's base has this repository, and it demands the token.
    expect(readFileSync(join(dir, 'private', 'SECRET.md'), 'utf8')).toBe('internal notes\n');
    expect(git.authorizations).toContain(
      `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`,
    );
    expect(readFileSync(join(dir, 'seen-env.txt'), 'utf8')).not.toContain(TOKEN);
    expect(readFileSync(join(dir, 'private', '.git', 'config'), 'utf8')).not.toContain(
      'Authorization',
    );
  });

  it('runs the vendor CLI config.harness.type names, in the prepared workspace, with its transcript', async () => {
    const uid = await environment({
      name: 'for-claude',
      github_repos: [{ owner: 'acme', repo: 'web' }],
    });
    const runId = await create('List the files', {
      worker_host: 'env-box',
      environment_id: uid,
      harness: { type: 'claude', model_id: 'claude-model' },
      harness_auth_secrets: { claude_auth_secret_name: 'ANTHROPIC_KEY' },
      secrets: [{ name: 'DEPLOY_KEY' }],
    });
    const done = await finished(runId);
    expect(done.status_message).toEqual({ message: 'The workspace has a README.' });
    expect(done.state).toBe('SUCCEEDED');
    expect(done.request_usage.total_tokens).toBe(260);

    const dir = join(workerRoot, runId);
    expect(existsSync(join(dir, 'web', 'README.md'))).toBe(true);
    const invocation = JSON.parse(readFileSync(join(dir, '.fake-cli-invocation.json'), 'utf8'));
    expect(invocation.args).toEqual(expect.arrayContaining(['--model', 'claude-model']));
    expect(invocation.prompt).toContain('List the files');
    expect(invocation.auth).toBe('value-of-ANTHROPIC_KEY');
    expect(invocation.env.DEPLOY_KEY).toBe('deploy-key-value');
    expect(invocation.env.GITHUB_TOKEN).toBeUndefined();

    const types = await eventTypes(runId);
    expect(types).toEqual(expect.arrayContaining(['worker_container_ready', 'harness_started']));
    expect(types.indexOf('worker_container_ready')).toBeLessThan(types.indexOf('harness_started'));

    const transcript = await api.transcriptText(runId);
    expect(transcript).toBe(readFileSync(join(dir, '.fake-cli-stdout.jsonl'), 'utf8'));
  });

  it('fails a run whose vendor CLI is not installed on the worker, and keeps working', async () => {
    const runId = await create('hello', {
      worker_host: 'env-box',
      harness: { type: 'gemini' },
      harness_auth_secrets: { gemini_auth_secret_name: 'ANTHROPIC_KEY' },
    });
    const failed = await finished(runId);
    expect(failed.state).toBe('FAILED');
    expect(failed.status_message.error_code).toBe('environment_setup_failed');
    expect(failed.status_message.message).toContain(
      `"${join(CLIS, 'no-such-gemini')}" is not installed on this machine (set AMBIENT_GEMINI_BIN)`,
    );
    // The worker is still there and takes the next run.
    model.script('sh-after', [{ text: 'Still alive.' }]);
    const next = await finished(await create('[script:sh-after]', { worker_host: 'env-box' }));
    expect(next.status_message).toEqual({ message: 'Still alive.' });
  });

  it("reaches only an allowlist environment's hosts through the worker's own egress proxy, which injects a bound secret", async () => {
    const upstreams = await startUpstreams();
    const egressRoot = mkdtempSync(join(tmpdir(), 'ambient-sh-egress-ws-'));
    const caFile = join(workerRoot, 'upstream-ca.pem');
    writeFileSync(caFile, upstreams.ca.certPem);
    try {
      // Its own machine's settings: the upstream on loopback allowed, its CA trusted.
      await startWorker('egress-box', egressRoot, [], {
        AMBIENT_EGRESS_ALLOW: 'localhost,127.0.0.1',
        NODE_EXTRA_CA_CERTS: caFile,
        AMBIENT_CLAUDE_BIN: join(CLIS, 'claude'),
      });
      const host = `localhost:${upstreams.httpsPort}`;
      const uid = await environment({
        name: 'locked-down',
        network: 'allowlist',
        egress_allow: [host],
        secrets: [{ name: 'GITHUB_TOKEN', inject_hosts: [host] }],
      });
      // NO_PROXY names localhost: this upstream is reached through the proxy on purpose.
      const viaProxy = "--noproxy ''";
      model.script('sh-egress', [
        {
          toolCalls: [
            {
              name: 'run_command',
              arguments: {
                command: [
                  `curl -sS --max-time 10 ${viaProxy} -o /dev/null -w 'bound:%{http_code}\\n' -H "Authorization: Bearer $GITHUB_TOKEN" https://${host}/`,
                  `curl -sS --max-time 10 ${viaProxy} https://localhost:${upstreams.httpPort}/ >/dev/null 2>&1 || echo other:refused`,
                  `curl -sS --max-time 5 --noproxy '*' -k https://127.0.0.1:${upstreams.httpsPort}/ >/dev/null 2>&1 || echo direct:refused`,
                  'echo "env:$GITHUB_TOKEN"',
                ].join('; '),
              },
            },
          ],
        },
        { text: 'done' },
      ]);
      const egressBefore = await scrape(app.ambient.metricsUrl!);
      const runId = await create('[script:sh-egress]', {
        worker_host: 'egress-box',
        environment_id: uid,
      });
      expect((await finished(runId)).state).toBe('SUCCEEDED');
      const [result] = model.requests
        .filter((r) => r.script === 'sh-egress')
        .flatMap((r) => r.body.messages.filter((m) => m.role === 'tool'))
        .map((m) => JSON.parse(String(m.content)) as { output: string });
      expect(result.output).toMatch(
        /^bound:200\nother:refused\ndirect:refused\nenv:ambient-secret-GITHUB_TOKEN-[A-Za-z0-9_-]{32}\n$/,
      );
      expect(upstreams.seen.map((r) => r.headers.authorization)).toEqual([`Bearer ${TOKEN}`]);
      const events = (await api.get(`/agent/runs/${runId}/timeline`)).body.events as {
        event_type: string;
        payload: Record<string, unknown>;
      }[];
      expect(events.find((e) => e.event_type === 'egress_denied')?.payload).toMatchObject({
        host: 'localhost',
        port: upstreams.httpPort,
        count: 1,
      });
      expect(events.find((e) => e.event_type === 'egress_summary')?.payload).toMatchObject({
        allowed: [{ host: 'localhost', port: upstreams.httpsPort, count: 1 }],
      });
      // The worker's summary (sent among its batched events) is what the server's metrics count.
      const egressAfter = await scrape(app.ambient.metricsUrl!);
      const counted = (decision: string) =>
        egressAfter.value('ambient_egress_requests_total', { decision }) -
        egressBefore.value('ambient_egress_requests_total', { decision });
      expect([counted('allowed'), counted('denied')]).toEqual([1, 1]);

      // A vendor CLI's key is bound to its provider here too: the CLI gets the placeholder.
      const cliRun = await create('List the files', {
        worker_host: 'egress-box',
        environment_id: uid,
        harness: { type: 'claude', model_id: 'claude-model' },
        harness_auth_secrets: { claude_auth_secret_name: 'ANTHROPIC_KEY' },
      });
      expect((await finished(cliRun)).state).toBe('SUCCEEDED');
      const invocation = JSON.parse(
        readFileSync(join(egressRoot, cliRun, '.fake-cli-invocation.json'), 'utf8'),
      );
      expect(invocation.auth).toMatch(/^ambient-secret-ANTHROPIC_KEY-[A-Za-z0-9_-]{32}$/);
      expect(JSON.stringify(invocation)).not.toContain('value-of-ANTHROPIC_KEY');
    } finally {
      await upstreams.close();
      rmSync(egressRoot, { recursive: true, force: true });
    }
  });
});
