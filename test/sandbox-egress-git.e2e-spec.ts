/**
 * A private repository cloned from inside an `allowlist` sandbox, on both isolating backends
 * (api + worker, fake model): an HTTPS git server on loopback addresses that AMBIENT_EGRESS_ALLOW
 * lists, demanding Basic credentials with the real token, and a team secret `GIT_TOKEN` bound to
 * one of them. The sandbox holds only the placeholder; the proxy puts the value in git's
 * `Authorization: Basic` for the bound host alone, and without the proxy git has no route.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { GitHttpServer, startGitHttpServer } from './support/git-http-server';
import { bareRepo } from './support/git-repos';
import { serverCertificateFor } from './support/test-certificates';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { runScriptedCommand } from './support/scripted-command';

const IMAGE = 'ambient-agent:bookworm';
const BUILD_IMAGE = resolve(__dirname, '..', 'sandbox', 'agent-image', 'build-image.sh');
/** The git server's addresses (all this host's loopback; NO_PROXY sends 127.0.0.1 direct). */
const BOUND_HOST = '127.0.0.2';
/** Listed with a method rule, so the proxy reads its requests, but GIT_TOKEN is not bound to it. */
const INTERCEPTED_HOST = '127.0.0.3';
/** Listed plainly: a tunnel the proxy does not look into. */
const TUNNELLED_HOST = '127.0.0.5';
const README = 'private readme\n';

const basic = (token: string) =>
  `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
const placeholder = /ambient-secret-GIT_TOKEN-[A-Za-z0-9_-]{32}/;

describe.each(['bubblewrap', 'docker'] as const)('git clone through the proxy (%s)', (backend) => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let workDir: string;
  let git: GitHttpServer;
  let port: number;
  let upstreamCa: string;
  let environmentId: string;
  const token = `ghp_${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;

  beforeAll(async () => {
    if (backend === 'docker') {
      await promisify(execFile)(BUILD_IMAGE, ['--tag', IMAGE], { maxBuffer: 16 << 20 });
    }
    workDir = mkdtempSync(join(tmpdir(), 'ambient-egress-git-'));
    const certs = serverCertificateFor(workDir, [BOUND_HOST, INTERCEPTED_HOST, TUNNELLED_HOST]);
    upstreamCa = readFileSync(certs.caFile, 'utf8');
    bareRepo(join(workDir, 'repos'), 'org', 'private', { 'README.md': README });
    git = await startGitHttpServer(join(workDir, 'repos'), token, {
      tls: { key: certs.key, cert: certs.cert },
      host: '0.0.0.0',
    });
    port = Number(new URL(git.url).port);
    model = await startFakeModelServer();
    env = createTestEnvironment(`egress_git_${backend}`, model.url);
    app = await startTestApp(env, ['api', 'worker'], {
      'sandbox.backend': backend,
      'sandbox.readonlyPaths': '',
      'sandbox.docker.defaultImage': IMAGE,
      'egress.allow': [BOUND_HOST, INTERCEPTED_HOST, TUNNELLED_HOST].join(','),
      'egress.upstreamCaFile': certs.caFile,
    });
    api = apiClient(app.baseUrl, app.apiKey);
    expect((await api.post('/secrets', { name: 'GIT_TOKEN', value: token })).status).toBe(201);
    const created = await api.post('/agent/environments', {
      name: `git-${backend}`,
      network: 'allowlist',
      egress_allow: [
        `${BOUND_HOST}:${port}`,
        { host: `${INTERCEPTED_HOST}:${port}`, methods: ['GET', 'POST'] },
        `${TUNNELLED_HOST}:${port}`,
      ],
      secrets: [{ name: 'GIT_TOKEN', inject_hosts: [`${BOUND_HOST}:${port}`] }],
    });
    expect(created.status).toBe(201);
    environmentId = created.body.uid as string;
  }, 600_000);

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
    await model?.close();
    await git?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  /** Runs one command in the environment; its output, and the run's id. */
  const runCommand = (command: string) =>
    runScriptedCommand({ api, model, environmentId, timeoutMs: 120_000 }, command);

  /**
   * A clone of org/private from `host` into `dir` (`env` before git, `config` after it), printing
   * git's messages as `<dir>-git:`, `<dir>-exit:<code>` and, when it came, `<dir>-readme:`.
   */
  const clone = (dir: string, host: string, { env = '', config = '' } = {}) =>
    `${env} git ${config} clone -q "https://x-access-token:$GIT_TOKEN@${host}:${port}/org/private.git" ${dir} 2>&1 | sed "s/^/${dir}-git:/"; ` +
    `echo "${dir}-exit:\${PIPESTATUS[0]}"; [ -f ${dir}/README.md ] && echo "${dir}-readme:$(cat ${dir}/README.md)"`;

  const authorizationsAt = (address: string, since: number) =>
    git.requests
      .slice(since)
      .filter((r) => r.address === address)
      .map((r) => r.authorization);

  it('clones a private repository from the bound host: the value reaches the git server, the sandbox keeps the placeholder', async () => {
    const since = git.requests.length;
    const { output, runId } = await runCommand(
      [
        'export GIT_TERMINAL_PROMPT=0',
        clone('bound', BOUND_HOST),
        'echo "env:$(env | grep ^GIT_TOKEN=)"',
        'echo "origin:$(git -C bound config remote.origin.url)"',
        'grep -rh GIT_TOKEN bound/.git | sed "s/^/gitdir:/"',
        'true',
      ].join('; '),
    );
    expect(output).toMatch(/^bound-exit:0$/m);
    expect(output).toContain(`bound-readme:${README.trim()}`);
    expect(output).toMatch(new RegExp(`^env:GIT_TOKEN=${placeholder.source}$`, 'm'));
    expect(output).toMatch(
      new RegExp(
        `^origin:https://x-access-token:${placeholder.source}@${BOUND_HOST}:${port}/org/private\\.git$`,
        'm',
      ),
    );
    expect(output).toMatch(/^gitdir:/m);
    expect(output).not.toContain(token);
    // git asks without credentials first, then with them: the server saw the value only.
    const seen = authorizationsAt(BOUND_HOST, since);
    expect(seen).toContain(basic(token));
    expect(seen.filter((a) => a !== undefined && a !== basic(token))).toEqual([]);
    const [summary] = (
      (await api.get(`/agent/runs/${runId}/timeline`)).body.events as {
        event_type: string;
        payload: { allowed: unknown[] };
      }[]
    )
      .filter((e) => e.event_type === 'egress_summary')
      .map((e) => e.payload);
    expect(summary.allowed).toEqual(
      expect.arrayContaining([expect.objectContaining({ host: BOUND_HOST, port })]),
    );
  });

  it('sends only the placeholder to a listed host GIT_TOKEN is not bound to, and that clone fails with 401', async () => {
    const since = git.requests.length;
    const { output } = await runCommand(
      [
        'export GIT_TERMINAL_PROMPT=0',
        clone('intercepted', INTERCEPTED_HOST),
        // The tunnelled host's TLS is the git server's own: the sandbox trusts its CA for it.
        `printf '%s' '${upstreamCa}' > /tmp/upstream-ca.pem`,
        clone('tunnelled', TUNNELLED_HOST, { env: 'GIT_SSL_CAINFO=/tmp/upstream-ca.pem' }),
        'true',
      ].join('; '),
    );
    for (const dir of ['intercepted', 'tunnelled']) {
      expect(output).toMatch(new RegExp(`^${dir}-exit:128$`, 'm'));
      expect(output).toMatch(new RegExp(`^${dir}-git:.*Authentication failed`, 'm'));
      expect(output).not.toContain(`${dir}-readme:`);
    }
    for (const host of [INTERCEPTED_HOST, TUNNELLED_HOST]) {
      const sent = authorizationsAt(host, since).filter((a) => a !== undefined);
      expect(sent.length).toBeGreaterThan(0);
      for (const authorization of sent) {
        const credentials = Buffer.from(authorization!.replace(/^Basic /, ''), 'base64').toString();
        expect(credentials).toMatch(new RegExp(`^x-access-token:${placeholder.source}$`));
      }
    }
    expect(JSON.stringify(git.requests.slice(since))).not.toContain(
      Buffer.from(`x-access-token:${token}`).toString('base64'),
    );
  });

  it('has no route to the git server for a clone that does not use the proxy', async () => {
    const since = git.requests.length;
    const { output, runId } = await runCommand(
      [
        'export GIT_TERMINAL_PROMPT=0',
        clone('emptyproxy', BOUND_HOST, { config: '-c http.proxy=' }),
        clone('noproxy', BOUND_HOST, { env: "NO_PROXY='*' no_proxy='*'" }),
        clone('unset', BOUND_HOST, {
          env: 'env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy',
        }),
        'true',
      ].join('; '),
    );
    for (const dir of ['emptyproxy', 'noproxy', 'unset']) {
      expect(output).toMatch(new RegExp(`^${dir}-exit:128$`, 'm'));
      expect(output).toMatch(new RegExp(`^${dir}-git:.*Failed to connect to ${BOUND_HOST}`, 'm'));
      expect(output).not.toContain(`${dir}-readme:`);
    }
    expect(git.requests.slice(since)).toEqual([]);
    const summaries = (
      (await api.get(`/agent/runs/${runId}/timeline`)).body.events as {
        event_type: string;
        payload: { allowed?: { host: string }[] };
      }[]
    ).filter((e) => e.event_type === 'egress_summary');
    expect(summaries.flatMap((e) => e.payload.allowed ?? []).map((a) => a.host)).not.toContain(
      BOUND_HOST,
    );
  });
});
