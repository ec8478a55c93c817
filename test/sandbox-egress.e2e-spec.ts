/**
 * Runs whose only way out is their execution's egress proxy, end to end on both isolating
 * backends (api + worker, fake model): upstream HTTPS servers on loopback addresses that
 * AMBIENT_EGRESS_ALLOW lists, an `allowlist` environment with a method rule and a secret bound to
 * one host, and an `egress` environment. What the sandbox reached, and what it was refused, is on
 * the run's timeline and in the metrics.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { scrape } from './support/prometheus';
import { serverCertificateFor } from './support/test-certificates';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { runScriptedCommand } from './support/scripted-command';

const IMAGE = 'ambient-agent:bookworm';
const BUILD_IMAGE = resolve(__dirname, '..', 'sandbox', 'agent-image', 'build-image.sh');
/** The upstream's addresses: all this host's loopback, told apart by the address reached. */
const SECRET_HOST = '127.0.0.2';
const GET_ONLY_HOST = '127.0.0.3';
/** Listed in AMBIENT_EGRESS_ALLOW (the guard lets it through) but in no environment's rules. */
const UNLISTED_HOST = '127.0.0.5';
/** Loopback that AMBIENT_EGRESS_ALLOW does not list: refused even in `egress`. */
const GUARDED_HOST = '127.0.0.4';

describe.each(['bubblewrap', 'docker'] as const)('egress through the proxy (%s)', (backend) => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let certDir: string;
  let upstream: Server;
  let port: number;
  /** What the upstream received: the address reached, the method, the Authorization header. */
  const received: { address: string; method: string; authorization: string | null }[] = [];
  const secretValue = `ghp_${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
  /** This machine's own address on its network: outside the sandbox, not loopback. */
  const hostAddress = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

  beforeAll(async () => {
    if (backend === 'docker') {
      await promisify(execFile)(BUILD_IMAGE, ['--tag', IMAGE], { maxBuffer: 16 << 20 });
    }
    certDir = mkdtempSync(join(tmpdir(), 'ambient-egress-certs-'));
    const certs = serverCertificateFor(certDir, [
      SECRET_HOST,
      GET_ONLY_HOST,
      UNLISTED_HOST,
      GUARDED_HOST,
    ]);
    upstream = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
      received.push({
        address: req.socket.localAddress?.replace(/^::ffff:/, '') ?? '',
        method: req.method ?? '',
        authorization: req.headers.authorization ?? null,
      });
      res.end(`answered by ${req.socket.localAddress?.replace(/^::ffff:/, '')}\n`);
    });
    await new Promise<void>((done) => upstream.listen(0, '0.0.0.0', done));
    port = (upstream.address() as AddressInfo).port;
    model = await startFakeModelServer();
    env = createTestEnvironment(`egress_${backend}`, model.url);
    app = await startTestApp(env, ['api', 'worker'], {
      'sandbox.backend': backend,
      'sandbox.readonlyPaths': '',
      'sandbox.docker.defaultImage': IMAGE,
      'egress.allow': [SECRET_HOST, GET_ONLY_HOST, UNLISTED_HOST].join(','),
      'egress.upstreamCaFile': certs.caFile,
    });
    api = apiClient(app.baseUrl, app.apiKey);
    expect((await api.post('/secrets', { name: 'GITHUB_TOKEN', value: secretValue })).status).toBe(
      201,
    );
  }, 600_000);

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
    await model?.close();
    await new Promise((done) => upstream?.close(done));
    rmSync(certDir, { recursive: true, force: true });
  });

  /** Runs one command in an environment; its output, and the run's id. */
  const runCommand = (environmentId: string, command: string) =>
    runScriptedCommand({ api, model, environmentId, timeoutMs: 90_000 }, command);

  async function environment(body: Record<string, unknown>): Promise<string> {
    const created = await api.post('/agent/environments', { name: `env-${Date.now()}`, ...body });
    expect(created.status).toBe(201);
    return created.body.uid as string;
  }

  const events = async (runId: string, type: string) =>
    ((await api.get(`/agent/runs/${runId}/timeline`)).body.events as Record<string, unknown>[])
      .filter((e) => e.event_type === type)
      .map((e) => e.payload as Record<string, unknown>);

  /** curl arguments that send even a loopback address through the proxy. */
  const viaProxy = "--proxy http://127.0.0.1:7172 --noproxy ''";
  /** curl through the proxy, printing `<label>:<body>` or `<label>:failed:<exit code>`. */
  const curl = (label: string, args: string) =>
    `out=$(curl -sSf --max-time 10 ${args} 2>/dev/null) && echo "${label}:$out" || echo "${label}:failed:$?"`;
  /** curl printing `<label>:<HTTP status>` (000 when no response came). */
  const status = (label: string, args: string) =>
    `echo "${label}:$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' ${args})"`;

  it('reaches the allowed hosts only, injects a bound secret only where it is bound, refuses a POST a method rule excludes, and records it all', async () => {
    const uid = await environment({
      network: 'allowlist',
      egress_allow: [
        `${SECRET_HOST}:${port}`,
        { host: `${GET_ONLY_HOST}:${port}`, methods: ['GET'] },
      ],
      secrets: [{ name: 'GITHUB_TOKEN', inject_hosts: [`${SECRET_HOST}:${port}`] }],
    });
    const before = await scrape(app.ambient.metricsUrl!);
    received.length = 0;
    const auth = '-H "Authorization: Bearer $GITHUB_TOKEN"';
    const { output, runId } = await runCommand(
      uid,
      [
        curl('secret-host', `${auth} https://${SECRET_HOST}:${port}/`),
        curl('other-host', `${auth} https://${GET_ONLY_HOST}:${port}/`),
        status('post', `-X POST -d x=1 https://${GET_ONLY_HOST}:${port}/`),
        curl('unlisted', `https://${UNLISTED_HOST}:${port}/`),
        curl('unlisted-again', `https://${UNLISTED_HOST}:${port}/`),
        curl('direct', `--noproxy '*' -k https://${SECRET_HOST}:${port}/`),
        `(timeout 3 bash -c 'exec 3<>/dev/tcp/${hostAddress}/${port}') 2>/dev/null && echo REACHED:network`,
        // UDP and DNS to an outside resolver: no route for either.
        `(timeout 3 bash -c 'exec 3<>/dev/udp/1.1.1.1/53') 2>/dev/null && echo REACHED:udp`,
        'timeout 5 getent hosts example.com >/dev/null 2>&1 && echo REACHED:dns',
        'echo "env:$(env | grep ^GITHUB_TOKEN=)"',
        `echo "environ:$(cat /proc/self/environ | tr '\\0' '\\n' | grep ^GITHUB_TOKEN=)"`,
        'env > dump.txt; echo "file:$(grep ^GITHUB_TOKEN= dump.txt)"',
        'echo "proxy:$HTTPS_PROXY no_proxy:$NO_PROXY"',
        // The API bridge stays direct beside the proxy.
        `echo "api:$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' "$AMBIENT_API_URL/agent/runs")"`,
        // Everything every process of the sandbox has in its environment and command line.
        `cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep ^GITHUB_TOKEN= | sort -u | sed 's/^/procs:/'`,
        'grep -rsh GITHUB_TOKEN /run/ambient /workspace /tmp | sed "s/^/files:/"; true',
      ].join('; '),
    );
    expect(output).toContain(`secret-host:answered by ${SECRET_HOST}`);
    expect(output).toContain(`other-host:answered by ${GET_ONLY_HOST}`);
    expect(output).toMatch(/^post:403$/m);
    expect(output).toMatch(/^unlisted:failed:\d+$/m);
    expect(output).toMatch(/^direct:failed:\d+$/m);
    expect(output).not.toContain('REACHED:');
    const placeholder = /ambient-secret-GITHUB_TOKEN-[A-Za-z0-9_-]{32}/;
    for (const where of ['env', 'environ', 'file']) {
      expect(output).toMatch(new RegExp(`^${where}:GITHUB_TOKEN=${placeholder.source}$`, 'm'));
    }
    expect(output).toContain('proxy:http://127.0.0.1:7172 no_proxy:127.0.0.1,localhost');
    expect(output).toMatch(/^api:[1-5]\d\d$/m);
    for (const line of output.split('\n').filter((l) => /^(procs|files):/.test(l))) {
      expect(line).toMatch(new RegExp(`^(procs|files):GITHUB_TOKEN=${placeholder.source}$`));
    }
    expect(output).not.toContain(secretValue);
    // The value went to its host, the placeholder to the other; the POST never left the proxy.
    expect(received).toEqual([
      { address: SECRET_HOST, method: 'GET', authorization: `Bearer ${secretValue}` },
      {
        address: GET_ONLY_HOST,
        method: 'GET',
        authorization: expect.stringMatching(new RegExp(`^Bearer ${placeholder.source}$`)),
      },
    ]);

    const denied = await events(runId, 'egress_denied');
    expect(denied).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ host: GET_ONLY_HOST, port, method: 'POST', count: 1 }),
        expect.objectContaining({ host: UNLISTED_HOST, port, count: 1 }),
      ]),
    );
    // The repeated refusal is folded: one event, counted twice in the summary.
    expect(denied.filter((d) => d.host === UNLISTED_HOST)).toHaveLength(1);
    const [summary] = await events(runId, 'egress_summary');
    expect(summary.allowed).toEqual(
      expect.arrayContaining([
        { host: SECRET_HOST, port, count: 1 },
        { host: GET_ONLY_HOST, port, count: 1 },
      ]),
    );
    expect(summary.denied).toEqual(
      expect.arrayContaining([expect.objectContaining({ host: UNLISTED_HOST, port, count: 2 })]),
    );
    const after = await scrape(app.ambient.metricsUrl!);
    const delta = (decision: string) =>
      after.value('ambient_egress_requests_total', { decision }) -
      before.value('ambient_egress_requests_total', { decision });
    expect(delta('allowed')).toBeGreaterThanOrEqual(2);
    expect(delta('denied')).toBeGreaterThanOrEqual(3);
  });

  it('lets `egress` reach any host the guard allows, but no loopback address AMBIENT_EGRESS_ALLOW does not list', async () => {
    const uid = await environment({ network: 'egress' });
    received.length = 0;
    const ca = readFileSync(join(certDir, 'ca.pem'), 'utf8');
    const { output, runId } = await runCommand(
      uid,
      [
        // The upstream's CA, for this tunnelled (not intercepted) host only.
        `printf '%s' '${ca}' > /tmp/upstream-ca.pem`,
        curl('listed', `--cacert /tmp/upstream-ca.pem https://${UNLISTED_HOST}:${port}/`),
        curl('guarded', `-k https://${GUARDED_HOST}:${port}/`),
        // Through the proxy on purpose (NO_PROXY sends loopback to the sandbox's own).
        status('database', `${viaProxy} http://127.0.0.1:3306/`),
        status('metadata', 'http://169.254.169.254/latest/meta-data/'),
        curl('direct', `--noproxy '*' -k https://${UNLISTED_HOST}:${port}/`),
        `(timeout 3 bash -c 'exec 3<>/dev/tcp/${hostAddress}/${port}') 2>/dev/null && echo REACHED:network`,
        'true',
      ].join('; '),
    );
    expect(output).toContain(`listed:answered by ${UNLISTED_HOST}`);
    expect(output).toMatch(/^guarded:failed:\d+$/m);
    expect(output).toMatch(/^database:403$/m);
    expect(output).toMatch(/^metadata:403$/m);
    expect(output).toMatch(/^direct:failed:\d+$/m);
    expect(output).not.toContain('REACHED:network');
    expect(received.map((r) => r.address)).toEqual([UNLISTED_HOST]);
    const denied = await events(runId, 'egress_denied');
    expect(denied.map((d) => d.host)).toEqual(
      expect.arrayContaining([GUARDED_HOST, '127.0.0.1', '169.254.169.254']),
    );
  });

  it('gives a `none` sandbox no proxy and no way out', async () => {
    const uid = await environment({ network: 'none' });
    const { output } = await runCommand(
      uid,
      [
        'echo "proxy:${HTTPS_PROXY:-unset}"',
        curl('via-port', `--proxy http://127.0.0.1:7172 -k https://${UNLISTED_HOST}:${port}/`),
        curl('direct', `--noproxy '*' -k https://${UNLISTED_HOST}:${port}/`),
      ].join('; '),
    );
    expect(output).toContain('proxy:unset');
    expect(output).toMatch(/^via-port:failed:\d+$/m);
    expect(output).toMatch(/^direct:failed:\d+$/m);
  });
});
