import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpSecretValues1763910000000 } from '../../migrations/1763910000000-mcp-secret-values';
import { parseDatabaseUrl } from '../../src/database/database-url';
import { apiClient } from '../support/api-client';
import { createWorkerCredential, RawWorkerClient } from '../support/raw-worker-client';
import { isStream, openSse } from '../support/sse-stream';
import { TEST_SECRETS_KEY } from '../support/test-app';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait';
import { TS_REGISTER } from '../support/ts-register-path';

/**
 * Class 9 of issue 19: MCP `env` and `headers` values are credentials. They never appear in an
 * API response, the database or the stream, yet the MCP servers receive the real values.
 */
const HEADER_MARKER = 'hdr-marker-5f1c9e0a7b';
const ENV_MARKER = 'env-marker-93ad04b2c8';
const REF_MARKER = 'ref-marker-c07e11aa42';
const IDENTITY_MARKER = 'idt-marker-6b2e8d9f01';
const SCHEDULE_MARKER = 'sch-marker-2a7c5e8d13';
const LEGACY_MARKER = 'old-marker-0d4f7a3e95';
const MARKERS = [
  HEADER_MARKER,
  ENV_MARKER,
  REF_MARKER,
  IDENTITY_MARKER,
  SCHEDULE_MARKER,
  LEGACY_MARKER,
];

const ECHO_SERVER = {
  command: process.execPath,
  args: ['-r', TS_REGISTER, resolve(__dirname, '../fixtures/mcp-echo-server.ts')],
};

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A streamable-HTTP MCP server on loopback that records the headers of every request. */
function startHeaderRecordingMcpServer(): Promise<{
  url: string;
  seen: IncomingMessage['headers'][];
  server: Server;
}> {
  const seen: IncomingMessage['headers'][] = [];
  const server = createServer((req, res) => {
    void (async () => {
      seen.push(req.headers);
      if (req.method !== 'POST') return res.writeHead(405).end();
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const mcp = new McpServer({ name: 'recorder', version: '1.0.0' });
      mcp.registerTool('ping', { description: 'Answers pong.' }, () => ({
        content: [{ type: 'text', text: 'pong' }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void mcp.close());
      await mcp.connect(transport);
      await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8')));
    })();
  });
  return new Promise((done) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      done({ url: `http://127.0.0.1:${port}/mcp`, seen, server });
    }),
  );
}

describe('security: MCP headers and env values are secrets', () => {
  let http: Awaited<ReturnType<typeof startHeaderRecordingMcpServer>>;

  beforeAll(async () => {
    http = await startHeaderRecordingMcpServer();
  });

  const { model, env, app, api } = useTestApp('mcp_secrets', ['api', 'worker'], () => ({
    // The recording MCP server listens on loopback, which the egress policy refuses by default.
    'egress.allow': new URL(http.url).host,
  }));

  beforeAll(async () => {
    expect((await api.post('/secrets', { name: 'MCP_REF', value: REF_MARKER })).status).toBe(201);
  });

  afterAll(async () => {
    await new Promise((done) => (http ? http.server.close(done) : done(undefined)));
  });

  const finished = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { what: `run ${runId} to finish`, timeoutMs: 45_000 },
    );

  /** The whole test database as `mysqldump` writes it (every table, every row). */
  const dump = async (): Promise<string> => {
    const location = parseDatabaseUrl(env.databaseUrl);
    const { stdout } = await promisify(execFile)(
      'mysqldump',
      [
        `--host=${location.host}`,
        `--port=${location.port}`,
        `--user=${location.user}`,
        ...(location.password ? [`--password=${location.password}`] : []),
        '--skip-extended-insert',
        location.database,
      ],
      { maxBuffer: 256 * 1024 * 1024 },
    );
    expect(stdout).toContain('CREATE TABLE `runs`');
    return stdout;
  };

  const expectNoMarker = (text: string, what: string) => {
    for (const marker of MARKERS) {
      expect({ what, leaked: text.includes(marker) ? marker : null }).toEqual({
        what,
        leaked: null,
      });
    }
  };

  let runId: string;

  it('hands the real header, env value and referenced secret to the MCP servers', async () => {
    model.script('mcp-secrets', [
      {
        toolCalls: [
          { name: 'mcp__remote__ping', arguments: {} },
          { name: 'mcp__echo__digest', arguments: { variable: 'MCP_TOKEN' } },
          { name: 'mcp__echo__digest', arguments: { variable: 'MCP_FROM_SECRET' } },
        ],
      },
      { text: 'Done.' },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: 'Use the servers [script:mcp-secrets]',
      config: {
        mcp_servers: {
          remote: {
            url: http.url,
            headers: { Authorization: `Bearer ${HEADER_MARKER}`, 'X-Ref': { secret: 'MCP_REF' } },
          },
          echo: {
            ...ECHO_SERVER,
            env: { MCP_TOKEN: ENV_MARKER, MCP_FROM_SECRET: { secret: 'MCP_REF' } },
          },
        },
      },
    });
    expect(created.status).toBe(200);
    runId = created.body.run_id;
    const run = await finished(runId);
    expect(run.status_message).toEqual({ message: 'Done.' });

    const authorizations = http.seen.map((headers) => headers.authorization);
    expect(authorizations.length).toBeGreaterThan(0);
    expect(new Set(authorizations)).toEqual(new Set([`Bearer ${HEADER_MARKER}`]));
    expect(new Set(http.seen.map((headers) => headers['x-ref']))).toEqual(new Set([REF_MARKER]));

    const conversation = JSON.stringify((await api.get(`/agent/runs/${runId}/conversation`)).body);
    expect(conversation).toContain(`MCP_TOKEN sha256=${sha256(ENV_MARKER)}`);
    expect(conversation).toContain(`MCP_FROM_SECRET sha256=${sha256(REF_MARKER)}`);
  });

  it('shows the values masked in get, list and the stream snapshot', async () => {
    const masked = {
      remote: {
        url: http.url,
        headers: { Authorization: '***', 'X-Ref': '<secret:MCP_REF>' },
      },
      echo: { ...ECHO_SERVER, env: { MCP_TOKEN: '***', MCP_FROM_SECRET: '<secret:MCP_REF>' } },
    };
    const got = await api.get(`/agent/runs/${runId}`);
    expect(got.body.agent_config.mcp_servers).toEqual(masked);
    expectNoMarker(got.text, 'GET /agent/runs/{id}');

    const list = await api.get('/agent/runs?limit=50');
    expect(list.status).toBe(200);
    const listed = list.body.runs.find((r: { run_id: string }) => r.run_id === runId);
    expect(listed.agent_config.mcp_servers).toEqual(masked);
    expectNoMarker(list.text, 'GET /agent/runs');

    for (const path of ['timeline', 'conversation']) {
      const res = await api.get(`/agent/runs/${runId}/${path}`);
      expect(res.status).toBe(200);
      expectNoMarker(res.text, `GET /agent/runs/{id}/${path}`);
    }

    const stream = await openSse(`${app.baseUrl}/agent/runs/${runId}/stream`, {
      apiKey: app.apiKey,
    });
    if (!isStream(stream)) throw new Error(`stream refused: ${JSON.stringify(stream)}`);
    try {
      const snapshot = await stream.next((e) => e.event === 'run', 'the run snapshot');
      expect(JSON.parse(snapshot.data).agent_config.mcp_servers).toEqual(masked);
      expectNoMarker(snapshot.data, 'stream snapshot');
    } finally {
      stream.close();
    }
  });

  it('keeps an identity’s values out of its responses, and a masked round trip keeps them', async () => {
    const created = await api.post('/agent/identities', {
      name: 'mcp-secret-agent',
      mcp_servers: {
        remote: { url: http.url, headers: { Authorization: `Bearer ${IDENTITY_MARKER}` } },
      },
    });
    expect(created.status).toBe(201);
    const uid = created.body.uid as string;
    const masked = { remote: { url: http.url, headers: { Authorization: '***' } } };
    expect(created.body.mcp_servers).toEqual(masked);
    expectNoMarker(created.text, 'POST /agent/identities');
    const got = await api.get(`/agent/identities/${uid}`);
    expect(got.body.mcp_servers).toEqual(masked);
    expectNoMarker(got.text, 'GET /agent/identities/{uid}');
    const list = await api.get('/agent/identities');
    expectNoMarker(list.text, 'GET /agent/identities');

    // What a client does with a GET response: send mcp_servers back unchanged.
    const put = await api.put(`/agent/identities/${uid}`, { mcp_servers: got.body.mcp_servers });
    expect(put.status).toBe(200);

    // The identity's runs still send the real header.
    model.script('mcp-identity', [
      { toolCalls: [{ name: 'mcp__remote__ping', arguments: {} }] },
      { text: 'Pinged.' },
    ]);
    const before = http.seen.length;
    const run = await api.post('/agent/runs', {
      prompt: 'Ping [script:mcp-identity]',
      agent_identity_uid: uid,
    });
    expect(run.status).toBe(200);
    expect((await finished(run.body.run_id)).status_message).toEqual({ message: 'Pinged.' });
    const sent = http.seen.slice(before).map((headers) => headers.authorization);
    expect(sent.length).toBeGreaterThan(0);
    expect(new Set(sent)).toEqual(new Set([`Bearer ${IDENTITY_MARKER}`]));
  });

  it('keeps a schedule’s values out of its responses; a masked round trip keeps them', async () => {
    const body = {
      name: 'Nightly MCP',
      cron_schedule: '0 3 * * *',
      prompt: 'Ping',
      enabled: false,
      agent_config: {
        mcp_servers: { echo: { ...ECHO_SERVER, env: { T: SCHEDULE_MARKER } } },
      },
    };
    const created = await api.post('/agent/schedules', body);
    expect(created.status).toBe(201);
    expect(created.body.agent_config.mcp_servers.echo.env).toEqual({ T: '***' });
    expectNoMarker(created.text, 'POST /agent/schedules');
    const stored = async () =>
      (
        (await app.dataSource.query(`SELECT agent_config FROM schedules WHERE id = ?`, [
          created.body.id,
        ])) as { agent_config: unknown }[]
      )[0].agent_config;
    const before = JSON.stringify(await stored());
    const got = await api.get(`/agent/schedules/${created.body.id}`);
    expectNoMarker(got.text, 'GET /agent/schedules/{id}');
    const put = await api.put(`/agent/schedules/${created.body.id}`, {
      ...body,
      agent_config: got.body.agent_config,
    });
    expect(put.status).toBe(200);
    expect(JSON.stringify(await stored())).toBe(before);
    expectNoMarker((await api.get('/agent/schedules')).text, 'GET /agent/schedules');
  });

  it('gives a self-hosted worker the real values only through /harness-support/start', async () => {
    const { credential } = await createWorkerCredential(api, 'mcp-box');
    const worker = await RawWorkerClient.connect(app.baseUrl, credential, 'mcp-box');
    try {
      const created = await api.post('/agent/runs', {
        prompt: 'Remote',
        config: {
          worker_host: 'mcp-box',
          mcp_servers: {
            remote: { url: http.url, headers: { Authorization: `Bearer ${HEADER_MARKER}` } },
          },
        },
      });
      expect(created.status).toBe(200);
      const assignment = await worker.next('task_assignment');
      const task = assignment.data.task as { agent_config_snapshot: Record<string, unknown> };
      expect(task.agent_config_snapshot.mcp_servers).toEqual({
        remote: { url: http.url, headers: { Authorization: '***' } },
      });
      expectNoMarker(JSON.stringify(assignment), 'task_assignment');
      const key = (assignment.data.env_vars as Record<string, string>).WARP_API_KEY;
      const start = await apiClient(app.baseUrl, key).post('/harness-support/start');
      expect(start.status).toBe(200);
      expect(start.body.config.mcp_servers.remote.headers).toEqual({
        Authorization: `Bearer ${HEADER_MARKER}`,
      });
    } finally {
      worker.close();
    }
  });

  it('stores no value in clear: a mysqldump of the database holds none of them', async () => {
    expectNoMarker(await dump(), 'mysqldump');
  });

  it('refuses a reference to a missing team secret with 400 naming the field', async () => {
    const runs = await api.get('/agent/runs?limit=100');
    const res = await api.post('/agent/runs', {
      prompt: 'x',
      config: { mcp_servers: { remote: { url: http.url, headers: { A: { secret: 'NOPE' } } } } },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe(
      'config.mcp_servers.remote.headers.A.secret: the team has no secret named "NOPE"',
    );
    const identity = await api.post('/agent/identities', {
      name: 'missing-secret',
      mcp_servers: { echo: { ...ECHO_SERVER, env: { T: { secret: 'NOPE' } } } },
    });
    expect(identity.status).toBe(400);
    expect(identity.body.detail).toContain('mcp_servers.echo.env.T.secret');
    // A masked value with nothing stored behind it is not taken as a literal.
    const masked = await api.post('/agent/runs', {
      prompt: 'x',
      config: { mcp_servers: { remote: { url: http.url, headers: { A: '***' } } } },
    });
    expect(masked.status).toBe(400);
    expect(masked.body.detail).toContain('config.mcp_servers.remote.headers.A');
    expect((await api.get('/agent/runs?limit=100')).body.runs.length).toBe(runs.body.runs.length);
  });

  it('fails the run clearly when a referenced secret is deleted before it executes again', async () => {
    expect((await api.post('/secrets', { name: 'SHORT_LIVED', value: 'x' })).status).toBe(201);
    model.script('mcp-short', [{ text: 'First.' }]);
    const created = await api.post('/agent/runs', {
      prompt: 'Hello [script:mcp-short]',
      config: {
        mcp_servers: { echo: { ...ECHO_SERVER, env: { T: { secret: 'SHORT_LIVED' } } } },
      },
    });
    expect(created.status).toBe(200);
    expect((await finished(created.body.run_id)).state).toBe('SUCCEEDED');
    expect((await api.delete('/secrets/SHORT_LIVED')).status).toBe(204);
    const followup = await api.post(`/agent/runs/${created.body.run_id}/followups`, {
      message: 'Again',
    });
    expect(followup.status).toBeLessThan(300);
    const run = await waitFor(
      async () => (await api.get(`/agent/runs/${created.body.run_id}`)).body,
      (r) => r.state === 'FAILED',
      { what: 'the follow-up execution to fail', timeoutMs: 45_000 },
    );
    expect(run.status_message).toMatchObject({
      error_code: 'invalid_request',
      message:
        'mcp_servers.echo.env.T: the team has no secret named "SHORT_LIVED" (was it deleted?)',
    });
  });

  it('the migration encrypts a value stored in clear, idempotently, and down restores it', async () => {
    await app.dataSource.query(
      `UPDATE runs SET config = JSON_SET(config, '$.mcp_servers.remote.headers.Authorization', ?)
        WHERE id = ?`,
      [LEGACY_MARKER, runId],
    );
    const stored = async () => {
      const [row] = (await app.dataSource.query(`SELECT config FROM runs WHERE id = ?`, [
        runId,
      ])) as {
        config: string | { mcp_servers: { remote: { headers: Record<string, unknown> } } };
      }[];
      const config = typeof row.config === 'string' ? JSON.parse(row.config) : row.config;
      return config.mcp_servers.remote.headers as Record<string, unknown>;
    };
    expect((await stored()).Authorization).toBe(LEGACY_MARKER);
    expect((await dump()).includes(LEGACY_MARKER)).toBe(true);

    const Migration = McpSecretValues1763910000000.withKeys({
      secretsKey: Buffer.from(TEST_SECRETS_KEY, 'hex'),
    });
    const runner = app.dataSource.createQueryRunner();
    try {
      await new Migration().up(runner);
      const sealed = await stored();
      expect(sealed.Authorization).toEqual({ ciphertext: expect.any(String) });
      expect(sealed['X-Ref']).toEqual({ secret: 'MCP_REF' });
      await new Migration().up(runner);
      expect(await stored()).toEqual(sealed);
      expectNoMarker(await dump(), 'mysqldump after the migration');
      expect((await api.get(`/agent/runs/${runId}`)).body.agent_config.mcp_servers.remote).toEqual({
        url: http.url,
        headers: { Authorization: '***', 'X-Ref': '<secret:MCP_REF>' },
      });

      await new Migration().down(runner);
      expect((await stored()).Authorization).toBe(LEGACY_MARKER);
      await new Migration().up(runner);
      expect((await stored()).Authorization).toEqual({ ciphertext: expect.any(String) });
    } finally {
      await runner.release();
    }
  });
});
