import { randomUUID } from 'node:crypto';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Response } from 'supertest';
import { DataSource } from 'typeorm';
import { RunCreationService } from '../src/modules/runs/run-creation.service';
import { requestDigest } from '../src/modules/idempotency/idempotency-key.header';
import { IdempotencySweeper } from '../src/modules/idempotency/idempotency.sweeper';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { Team } from '../src/modules/teams/team.entity';
import { TeamsService } from '../src/modules/teams/teams.service';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { runCli } from './support/cli-process';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';

type Client = ReturnType<typeof apiClient>;

/** `Idempotency-Key` on create and action POSTs (api role: runs stay QUEUED). */
describe('Idempotency-Key', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: Client;
  /** Another principal of the same team. */
  let colleague: Client;
  /** An admin of another team. */
  let eve: Client;
  let eveTeamId: string;
  let dataSource: DataSource;

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('idempotency', model.url);
    app = await startTestApp(env, ['api']);
    api = apiClient(app.baseUrl, app.apiKey);
    dataSource = app.dataSource;
    const teams = app.ambient.app.get(TeamsService);
    const keys = app.ambient.app.get(ApiKeysService);
    const other = await teams.createTeam(`idempotency-other-${Date.now()}`);
    eveTeamId = other.id;
    eve = apiClient(
      app.baseUrl,
      (await keys.create(await teams.createUser(other, { displayName: 'Eve', role: 'admin' }), 't'))
        .key,
    );
    const [me] = (await dataSource.query(`SELECT team_id FROM users LIMIT 1`)) as {
      team_id: string;
    }[];
    const team = (await dataSource.getRepository(Team).findOneByOrFail({ id: me.team_id }))!;
    colleague = apiClient(
      app.baseUrl,
      (await keys.create(await teams.createUser(team, { displayName: 'Bob', role: 'admin' }), 't'))
        .key,
    );
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  const keyed = (client: Client, path: string, key: string, body?: unknown) => {
    const req = client.post(path).set('Idempotency-Key', key);
    return body === undefined ? req : req.send(body as object);
  };
  const count = async (sql: string, params: unknown[] = []) =>
    Number(((await dataSource.query(sql, params)) as { n: string | number }[])[0].n);
  const runsWithPrompt = (prompt: string) =>
    count(`SELECT COUNT(*) AS n FROM runs WHERE prompt = ?`, [prompt]);
  const storedKeys = (key: string) =>
    count(`SELECT COUNT(*) AS n FROM idempotency_keys WHERE idem_key = ?`, [key]);

  const expectReplay = (first: Response, again: Response) => {
    expect(again.status).toBe(first.status);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
  };

  it('replays the first answer to the same request: same status and body, one run', async () => {
    const key = randomUUID();
    const body = { prompt: `replay ${key}`, metadata: { k: 'v' } };
    const first = await keyed(api, '/agent/runs', key, body);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ run_id: expect.any(String), state: 'QUEUED' });
    const again = await keyed(api, '/agent/runs', key, body);
    expectReplay(first, again);
    expect(again.body.run_id).toBe(first.body.run_id);
    expect(await runsWithPrompt(body.prompt)).toBe(1);
    // Without a key the same request creates another run, as before.
    expect((await api.post('/agent/runs', body)).status).toBe(200);
    expect(await runsWithPrompt(body.prompt)).toBe(2);
  });

  it('refuses the same key with another request (422 naming the key), creating nothing', async () => {
    const key = randomUUID();
    const first = await keyed(api, '/agent/runs', key, { prompt: `a ${key}` });
    expect(first.status).toBe(200);
    for (const [path, body] of [
      ['/agent/runs', { prompt: `b ${key}` }],
      ['/agent/run', { prompt: `a ${key}` }],
    ] as const) {
      const other = await keyed(api, path, key, body);
      expect(other.status).toBe(422);
      expect(other.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(other.body.detail).toContain('Idempotency-Key');
      expect(other.body.detail).toContain(key);
    }
    expect(await runsWithPrompt(`b ${key}`)).toBe(0);
    expect(await runsWithPrompt(`a ${key}`)).toBe(1);
  });

  it('12 concurrent requests with one key create exactly one run; the others get 409 or the replay', async () => {
    const key = randomUUID();
    const body = { prompt: `concurrent ${key}` };
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => keyed(api, '/agent/runs', key, body).then((r) => r)),
    );
    expect(await runsWithPrompt(body.prompt)).toBe(1);
    const ok = answers.filter((r) => r.status === 200);
    const busy = answers.filter((r) => r.status === 409);
    expect(ok.length + busy.length).toBe(12);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(ok.filter((r) => r.headers['idempotent-replayed'] !== 'true')).toHaveLength(1);
    expect(new Set(ok.map((r) => r.body.run_id)).size).toBe(1);
    for (const res of busy) {
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(res.body.detail).toContain('Idempotency-Key');
    }
    // Retrying with the key until an answer comes gives the one run.
    const retried = await keyed(api, '/agent/runs', key, body);
    expect(retried.status).toBe(200);
    expect(retried.body.run_id).toBe(ok[0].body.run_id);
  });

  it('scopes keys to the team and the principal: the same key elsewhere creates its own run', async () => {
    const key = randomUUID();
    const body = { prompt: `scoped ${key}` };
    const mine = await keyed(api, '/agent/runs', key, body);
    const theirs = await keyed(eve, '/agent/runs', key, body);
    const colleagues = await keyed(colleague, '/agent/runs', key, body);
    for (const res of [mine, theirs, colleagues]) {
      expect(res.status).toBe(200);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    }
    expect(new Set([mine, theirs, colleagues].map((r) => r.body.run_id)).size).toBe(3);
    expect(await runsWithPrompt(body.prompt)).toBe(3);
    // Eve cannot see (or replay) our run through the key.
    expect((await keyed(eve, '/agent/runs', key, body)).body.run_id).toBe(theirs.body.run_id);
  });

  it('a request that fails validation stores nothing: the retry with a fixed body succeeds', async () => {
    const key = randomUUID();
    const bad = await keyed(api, '/agent/runs', key, { prompt: 5 });
    expect(bad.status).toBe(400);
    expect(await storedKeys(key)).toBe(0);
    const missingEnv = await keyed(api, '/agent/runs', key, {
      prompt: `fixed ${key}`,
      config: { environment_id: 'nope' },
    });
    expect(missingEnv.status).toBeGreaterThanOrEqual(400);
    expect(await storedKeys(key)).toBe(0);
    const fixed = await keyed(api, '/agent/runs', key, { prompt: `fixed ${key}` });
    expect(fixed.status).toBe(200);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
    expect(await runsWithPrompt(`fixed ${key}`)).toBe(1);
  });

  it('refuses an empty, too long or non-ASCII key with 400 naming the header, creating nothing', async () => {
    const prompt = `bad key ${randomUUID()}`;
    for (const key of ['', '   ', 'k'.repeat(256), 'clé']) {
      const res = await keyed(api, '/agent/runs', key, { prompt });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^Idempotency-Key: /);
    }
    expect(await runsWithPrompt(prompt)).toBe(0);
    // 255 characters and the quoted form of the IETF draft are fine (the quotes are not the key).
    const longest = 'k'.repeat(255);
    expect((await keyed(api, '/agent/runs', longest, { prompt })).status).toBe(200);
    const quoted = await keyed(api, '/agent/runs', `"${longest}"`, { prompt });
    expect(quoted.headers['idempotent-replayed']).toBe('true');
    expect(await runsWithPrompt(prompt)).toBe(1);
  });

  it('records the key in the run transaction: a run and its key commit together', async () => {
    const key = randomUUID();
    const res = await keyed(api, '/agent/runs', key, { prompt: `tx ${key}` });
    const [row] = (await dataSource.query(
      `SELECT response_status, response_body, claimed_until,
         TIMESTAMPDIFF(SECOND, created_at, expires_at) AS ttl FROM idempotency_keys
       WHERE idem_key = ?`,
      [key],
    )) as {
      response_status: number;
      response_body: string;
      claimed_until: Date | null;
      ttl: number;
    }[];
    expect(row).toMatchObject({ response_status: 200, claimed_until: null });
    expect(JSON.parse(row.response_body)).toEqual(res.body);
    expect(Number(row.ttl)).toBe(24 * 3600);
  });

  describe('claims held by requests in flight', () => {
    /** The scope (team, principal) of our key, learnt from a key it stored. */
    const ourScope = async () => {
      const key = randomUUID();
      await keyed(api, '/agent/runs', key, { prompt: `scope ${key}` });
      const [row] = (await dataSource.query(
        `SELECT team_id, principal_id FROM idempotency_keys WHERE idem_key = ?`,
        [key],
      )) as { team_id: string; principal_id: string }[];
      return row;
    };
    /** A claim another request holds (until `claimedUntil`) on `key`, for any request digest. */
    const holdClaim = async (key: string, claimedUntil: Date, digest = 'f'.repeat(64)) => {
      const token = randomUUID();
      const scope = await ourScope();
      await dataSource.query(
        `INSERT INTO idempotency_keys (team_id, principal_id, idem_key, request_digest,
           claim_token, claimed_until, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, NOW(3), NOW(3) + INTERVAL 1 DAY)`,
        [scope.team_id, scope.principal_id, key, digest, token, claimedUntil],
      );
      return { teamId: scope.team_id, principalId: scope.principal_id, key, token };
    };

    it('answers 409 with Retry-After while another request holds the key, creating nothing', async () => {
      const key = randomUUID();
      const body = { prompt: `held ${key}` };
      const digest = requestDigest('POST', `${api.prefix}/agent/runs`, body);
      await holdClaim(key, new Date(Date.now() + 60_000), digest);
      const res = await keyed(api, '/agent/runs', key, body);
      expect(res.status).toBe(409);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(res.body.detail).toContain(key);
      expect(await runsWithPrompt(`held ${key}`)).toBe(0);
    });

    it('takes over the key of a request that crashed (its claim lapsed) and creates the run', async () => {
      const key = randomUUID();
      await holdClaim(key, new Date(Date.now() - 1000));
      const res = await keyed(api, '/agent/runs', key, { prompt: `lapsed ${key}` });
      expect(res.status).toBe(200);
      expect(await runsWithPrompt(`lapsed ${key}`)).toBe(1);
    });

    it.each([
      ['batched with other creations', {}],
      [
        'committed alone (attachments)',
        { attachments: [{ fileName: 'a', mimeType: 'text/plain', data: Buffer.from('a') }] },
      ],
    ])(
      'refuses to commit a run whose key another request took over (%s): no run, no answer',
      async (_how, extra) => {
        const key = randomUUID();
        const taken = await holdClaim(key, new Date(Date.now() + 60_000));
        const creation = app.ambient.app.get(RunCreationService);
        const prompt = `taken over ${key}`;
        const create = (token: string) =>
          creation.create({
            teamId: taken.teamId,
            creatorId: taken.principalId,
            source: 'API',
            prompt,
            ...extra,
            idempotency: {
              claim: { ...taken, token, recordedInTransaction: false },
              status: 200,
              body: (run) => ({ run_id: run.id }),
            },
          });
        await expect(create(randomUUID())).rejects.toMatchObject({ status: 409 });
        expect(await runsWithPrompt(prompt)).toBe(0);
        // The holder's own commit records its answer with its run.
        const run = await create(taken.token);
        expect(await runsWithPrompt(prompt)).toBe(1);
        const [row] = (await dataSource.query(
          `SELECT response_status, response_body FROM idempotency_keys WHERE idem_key = ?`,
          [key],
        )) as { response_status: number; response_body: string }[];
        expect(row.response_status).toBe(200);
        expect(JSON.parse(row.response_body)).toEqual({ run_id: run.id });
      },
    );
  });

  describe('every create and action POST (table-driven)', () => {
    interface Case {
      name: string;
      /** The request, with what it needs created first. */
      request: () => Promise<{ client?: Client; path: string; body?: unknown }>;
      /** Counts what the request creates, when it creates rows. */
      created?: () => Promise<number>;
      status: number;
    }
    const queuedRun = async () =>
      (await api.post('/agent/runs', { prompt: `target ${randomUUID()}` })).body.run_id as string;
    const schedule = async () =>
      (
        await api.post('/agent/schedules', {
          name: `s ${randomUUID()}`,
          cron_schedule: '0 3 * * *',
          prompt: 'x',
          enabled: false,
        })
      ).body.id as string;
    const identity = async () =>
      (await api.post('/agent/identities', { name: `i-${randomUUID().slice(0, 8)}` })).body
        .uid as string;
    const environment = async () =>
      (await api.post('/agent/environments', { name: `e-${randomUUID().slice(0, 8)}` })).body
        .uid as string;
    const factory = async () =>
      (await api.post('/factory', { name: `f-${randomUUID().slice(0, 8)}` })).body.uid as string;
    const webhook = async () => {
      const f = await factory();
      const created = await api.post(`/factory/${f}/webhooks`, {
        name: `h${randomUUID().slice(0, 8)}`,
      });
      if (created.status !== 201) throw new Error(`webhook: ${created.status} ${created.text}`);
      const hook = created.body.uid as string;
      return `/factory/${f}/webhooks/${hook}`;
    };
    const unique = randomUUID().slice(0, 8);

    const cases: Case[] = [
      {
        name: 'createRun (attachments: its own transaction)',
        request: async () => ({
          path: '/agent/runs',
          body: {
            prompt: `attached ${unique}`,
            attachments: [{ file_name: 'a.txt', mime_type: 'text/plain', data: 'aGk=' }],
          },
        }),
        created: () => runsWithPrompt(`attached ${unique}`),
        status: 200,
      },
      {
        name: 'createRun (child of a parent run: its own transaction)',
        request: async () => ({
          path: '/agent/runs',
          body: { prompt: `child ${unique}`, parent_run_id: await queuedRun() },
        }),
        created: () => runsWithPrompt(`child ${unique}`),
        status: 200,
      },
      {
        name: 'runAgent (legacy path)',
        request: async () => ({ path: '/agent/run', body: { prompt: `legacy ${unique}` } }),
        created: () => runsWithPrompt(`legacy ${unique}`),
        status: 200,
      },
      {
        name: 'submitFollowup',
        request: async () => ({
          path: `/agent/runs/${await queuedRun()}/followups`,
          body: { message: `follow ${unique}` },
        }),
        created: () =>
          count(`SELECT COUNT(*) AS n FROM run_followups WHERE message = ?`, [`follow ${unique}`]),
        status: 200,
      },
      {
        name: 'cancelRun',
        request: async () => ({ path: `/agent/runs/${await queuedRun()}/cancel` }),
        status: 200,
      },
      {
        name: 'dispatchJudge',
        request: async () => ({
          path: `/agent/runs/${await queuedRun()}/judges`,
          body: { prompt: `judge ${unique}` },
        }),
        created: () =>
          count(`SELECT COUNT(*) AS n FROM runs WHERE prompt LIKE ?`, [`%judge ${unique}%`]),
        status: 200,
      },
      {
        name: 'createScheduledAgent',
        request: async () => ({
          path: '/agent/schedules',
          body: {
            name: `sched ${unique}`,
            cron_schedule: '0 3 * * *',
            prompt: 'x',
            enabled: false,
          },
        }),
        created: () =>
          count(`SELECT COUNT(*) AS n FROM schedules WHERE name = ?`, [`sched ${unique}`]),
        status: 201,
      },
      {
        name: 'pauseScheduledAgent',
        request: async () => ({ path: `/agent/schedules/${await schedule()}/pause` }),
        status: 200,
      },
      {
        name: 'resumeScheduledAgent',
        request: async () => ({ path: `/agent/schedules/${await schedule()}/resume` }),
        status: 200,
      },
      {
        name: 'createAgent',
        request: async () => ({ path: '/agent/identities', body: { name: `ident-${unique}` } }),
        created: () =>
          count(`SELECT COUNT(*) AS n FROM agent_identities WHERE name = ?`, [`ident-${unique}`]),
        status: 201,
      },
      {
        name: 'createAgentApiKey (a new secret each time it really runs)',
        request: async () => ({
          path: `/agent/identities/${await identity()}/api-keys`,
          body: { name: `key-${unique}` },
        }),
        created: () =>
          count(`SELECT COUNT(*) AS n FROM api_keys WHERE name = ?`, [`key-${unique}`]),
        status: 201,
      },
      {
        name: 'createSecret',
        request: async () => ({ path: '/secrets', body: { name: `S_${unique}`, value: 'v' } }),
        created: () =>
          count(`SELECT COUNT(*) AS n FROM team_secrets WHERE name = ?`, [`S_${unique}`]),
        status: 201,
      },
      {
        name: 'createEnvironment',
        request: async () => ({ path: '/agent/environments', body: { name: `env-${unique}` } }),
        created: () =>
          count(`SELECT COUNT(*) AS n FROM environments WHERE name = ?`, [`env-${unique}`]),
        status: 201,
      },
      {
        name: 'grantEnvironment (204, no body)',
        request: async () => ({
          path: `/agent/environments/${await environment()}/grants`,
          body: { team_id: eveTeamId },
        }),
        status: 204,
      },
      {
        name: 'createEnvironmentShareLink',
        request: async () => ({ path: `/agent/environments/${await environment()}/share-link` }),
        status: 200,
      },
      {
        name: 'acceptEnvironmentShareLink',
        request: async () => {
          const uid = await environment();
          const token = (await api.post(`/agent/environments/${uid}/share-link`)).body.share_token;
          return { client: eve, path: `/agent/environments/shared/${token}/accept` };
        },
        status: 200,
      },
      {
        name: 'createFactory',
        request: async () => ({ path: '/factory', body: { name: `fac-${unique}` } }),
        created: () =>
          count(`SELECT COUNT(*) AS n FROM factories WHERE name = ?`, [`fac-${unique}`]),
        status: 201,
      },
      {
        name: 'createWebhook',
        request: async () => ({
          path: `/factory/${await factory()}/webhooks`,
          body: { name: `hook-${unique}` },
        }),
        created: () =>
          count(`SELECT COUNT(*) AS n FROM webhooks WHERE name = ?`, [`hook-${unique}`]),
        status: 201,
      },
      {
        name: 'disableWebhook',
        request: async () => ({ path: `${await webhook()}/disable` }),
        status: 200,
      },
      {
        name: 'enableWebhook',
        request: async () => ({ path: `${await webhook()}/enable` }),
        status: 200,
      },
      {
        name: 'rotateWebhookSecret (a new secret each time it really runs)',
        request: async () => ({ path: `${await webhook()}/rotate-secret` }),
        status: 200,
      },
    ];

    it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      const { client = api, path, body } = await c.request();
      const before = c.created ? await c.created() : 0;
      const key = randomUUID();
      const first = await keyed(client, path, key, body);
      expect(first.status).toBe(c.status);
      const again = await keyed(client, path, key, body);
      expectReplay(first, again);
      if (c.created) expect((await c.created()) - before).toBe(1);
      const other = await keyed(client, path, key, { different: true });
      expect(other.status).toBe(422);
    });

    it('documents the header on each of these operations in the OpenAPI document', async () => {
      const doc = (await api.get('/openapi.json')).body as {
        paths: Record<
          string,
          Record<string, { operationId: string; parameters?: { name: string; in: string }[] }>
        >;
      };
      const withHeader = Object.values(doc.paths)
        .flatMap((ops) => Object.values(ops))
        .filter((op) =>
          op.parameters?.some((p) => p.in === 'header' && p.name === 'Idempotency-Key'),
        )
        .map((op) => op.operationId);
      for (const c of cases) expect(withHeader).toContain(c.name.split(' ')[0]);
      expect(withHeader).toEqual(
        expect.arrayContaining(['createRun', 'syncFactory', 'reportScores']),
      );
    });
  });

  describe('the CLI', () => {
    let proxy: Server;
    let proxyUrl: string;
    /** The keys of the POSTs the proxy forwarded, in order. */
    const forwarded: (string | undefined)[] = [];

    beforeAll(async () => {
      // Forwards to the API; the answer to the first POST is lost (the connection drops after
      // the API did the work), as behind a proxy that times out.
      proxy = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          void (async () => {
            const key = req.headers['idempotency-key'] as string | undefined;
            if (req.method === 'POST') forwarded.push(key);
            const answer = await fetch(`${new URL(app.baseUrl).origin}${req.url}`, {
              method: req.method,
              headers: Object.fromEntries(
                Object.entries(req.headers).filter(([name]) => name !== 'host'),
              ) as Record<string, string>,
              body: chunks.length ? Buffer.concat(chunks) : undefined,
            });
            const text = await answer.text();
            if (req.method === 'POST' && forwarded.length === 1) {
              req.socket.destroy();
              return;
            }
            res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(text);
          })();
        });
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${api.prefix}`;
    });

    afterAll(async () => {
      proxy?.closeAllConnections();
      await new Promise((resolve) => proxy?.close(resolve));
    });

    it('sends one key per command and reuses it when it retries a request whose answer was lost', async () => {
      const name = `cli-${randomUUID().slice(0, 8)}`;
      const result = await runCli(
        ['environments', 'create', '--name', name, '--url', proxyUrl, '--key', app.apiKey],
        env.childEnv(),
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(forwarded).toHaveLength(2);
      expect(forwarded[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(forwarded[1]).toBe(forwarded[0]);
      const rows = (await dataSource.query(`SELECT id FROM environments WHERE name = ?`, [
        name,
      ])) as { id: string }[];
      expect(rows).toHaveLength(1);
      expect(JSON.parse(result.stdout).uid).toBe(rows[0].id);
    });
  });

  describe('expiry', () => {
    let shortLived: TestApp;
    let short: Client;

    beforeAll(async () => {
      // A second replica of the same service whose keys live 1.8 seconds.
      shortLived = await startTestApp(env, ['api'], { 'idempotency.ttlHours': 0.0005 });
      short = apiClient(shortLived.baseUrl, shortLived.apiKey);
    });

    afterAll(async () => {
      await shortLived?.close();
    });

    it('forgets a key after AMBIENT_IDEMPOTENCY_TTL_HOURS: swept, and the same key creates anew', async () => {
      const key = randomUUID();
      const body = { prompt: `expiry ${key}` };
      const first = await keyed(short, '/agent/runs', key, body);
      expect(first.status).toBe(200);
      expect(await storedKeys(key)).toBe(1);
      await waitFor(
        () =>
          count(
            `SELECT COUNT(*) AS n FROM idempotency_keys WHERE idem_key = ? AND expires_at < ?`,
            [key, new Date()],
          ),
        (n) => n === 1,
        { what: 'the key to expire' },
      );
      await shortLived.ambient.app.get(IdempotencySweeper).sweepNow();
      expect(await storedKeys(key)).toBe(0);
      const again = await keyed(short, '/agent/runs', key, body);
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect(again.body.run_id).not.toBe(first.body.run_id);
      expect(await runsWithPrompt(body.prompt)).toBe(2);
    });
  });

  describe('an answer that carries a credential shown once', () => {
    let agentUid: string;
    let environmentUid: string;
    beforeAll(async () => {
      agentUid = (await api.post('/agent/identities', { name: `shown-once-${randomUUID()}` })).body
        .uid as string;
      environmentUid = (await api.post('/agent/environments', { name: 'shown-once' })).body
        .uid as string;
    });
    const stored = (key: string) =>
      dataSource.query(
        `SELECT response_body, response_sealed, shown_once FROM idempotency_keys WHERE idem_key = ?`,
        [key],
      ) as Promise<
        { response_body: string | null; response_sealed: Buffer | null; shown_once: number }[]
      >;

    it.each([
      ["an agent's API key", () => `/agent/identities/${agentUid}/api-keys`, 'key', 201],
      [
        'a share token',
        () => `/agent/environments/${environmentUid}/share-link`,
        'share_token',
        200,
      ],
    ])(
      'keeps %s only encrypted, and replays it to the same key',
      async (_what, path, field, status) => {
        const key = randomUUID();
        const first = await keyed(api, path(), key, {});
        expect(first.status).toBe(status);
        const credential = first.body[field] as string;
        expect(credential.length).toBeGreaterThan(10);
        const [row] = await stored(key);
        expect(row.response_body).toBeNull();
        expect(row.shown_once).toBe(1);
        expect(Buffer.from(row.response_sealed!).toString('latin1')).not.toContain(credential);
        const again = await keyed(api, path(), key, {});
        expect(again.status).toBe(status);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.body[field]).toBe(credential);
      },
    );

    it("never replays one key's answer to another key of the same person", async () => {
      const keys = app.ambient.app.get(ApiKeysService);
      // The bootstrap key (the first key) and another key of its person, with a lower role.
      const [admin] = (await dataSource.query(
        `SELECT user_id, team_id FROM api_keys ORDER BY created_at LIMIT 1`,
      )) as { user_id: string; team_id: string }[];
      const memberKey = await keys.create(
        { id: admin.user_id, teamId: admin.team_id },
        'member key of the same person',
        { role: 'member' },
      );
      const member = apiClient(app.baseUrl, memberKey.key);
      const key = randomUUID();
      const path = `/agent/environments/${environmentUid}/share-link`;
      const adminAnswer = await keyed(api, path, key, {});
      expect(adminAnswer.status).toBe(200);
      const memberAnswer = await keyed(member, path, key, {});
      expect(memberAnswer.status).toBe(200);
      expect(memberAnswer.headers['idempotent-replayed']).toBeUndefined();
      expect(memberAnswer.body.share_token).not.toBe(adminAnswer.body.share_token);
      expect(await storedKeys(key)).toBe(2);
    });

    describe('on a server without AMBIENT_SECRETS_KEY', () => {
      let keyless: TestApp;
      beforeAll(async () => {
        keyless = await startTestApp(env, ['api'], { secretsKey: '' });
      });
      afterAll(async () => {
        await keyless?.close();
      });

      it('keeps no copy: the replay answers 409 already_shown and changes nothing', async () => {
        const client = apiClient(keyless.baseUrl, keyless.apiKey);
        const key = randomUUID();
        const path = `/agent/environments/${environmentUid}/share-link`;
        const first = await keyed(client, path, key, {});
        expect(first.status).toBe(200);
        const [row] = await stored(key);
        expect(row).toEqual({ response_body: null, response_sealed: null, shown_once: 1 });
        const again = await keyed(client, path, key, {});
        expect(again.status).toBe(409);
        expect(again.body).toMatchObject({
          status: 409,
          type: expect.stringMatching(/already-shown$/),
          detail: expect.stringContaining(`Idempotency-Key: "${key}"`),
        });
        expect(await stored(key)).toEqual([row]);
      });
    });
  });
});
