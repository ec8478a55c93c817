import { request as httpRequest } from 'node:http';
import { useTestApp } from './support/use-test-app';
import { createFactory, createWebhook, deliver } from './support/webhook-helpers';

/** Tables a refused request must leave alone. */
const TABLES = [
  'runs',
  'run_metadata',
  'environments',
  'schedules',
  'team_secrets',
  'agent_identities',
  'factories',
  'webhooks',
];

/** `"bad\ud800x"` as JSON text: JSON.parse makes it a string with a lone surrogate. */
const LONE = 'bad\\ud800x';

describe('invalid Unicode in requests is refused at the boundary (api + ingress)', () => {
  let auth: Record<string, string>;

  const { app, api } = useTestApp('unicode_input', ['api', 'ingress'], {
    'webhooks.baseUrl': 'http://hooks.example.test',
  });

  beforeAll(async () => {
    auth = { Authorization: `Bearer ${app.apiKey}`, 'Content-Type': 'application/json' };
  });

  async function counts(): Promise<Record<string, number>> {
    const result: Record<string, number> = {};
    for (const table of TABLES) {
      const [row] = (await app.dataSource.query(`SELECT COUNT(*) AS n FROM \`${table}\``)) as {
        n: string;
      }[];
      result[table] = Number(row.n);
    }
    return result;
  }

  /** Sends raw JSON text (so the escape reaches the parser as written). */
  function send(method: 'post' | 'put' | 'patch', path: string, json: string) {
    return api.raw()[method](`${api.prefix}${path}`).set(auth).send(json);
  }

  function expectInvalid(
    res: { status: number; headers: Record<string, string>; body: Record<string, unknown> },
    field: string,
  ): void {
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({
      status: 400,
      detail: `${field}: must be valid Unicode text`,
    });
  }

  it('refuses the three former 500s with 400 naming the field, writing nothing', async () => {
    const before = await counts();
    expectInvalid(
      await send('post', '/agent/runs', `{"prompt":"ok","metadata":{"k":"${LONE}"}}`),
      'metadata.k',
    );
    expectInvalid(await send('post', '/agent/environments', `{"name":"${LONE}"}`), 'name');
    expectInvalid(await send('post', '/factory', `{"name":"${LONE}"}`), 'name');
    expect(await counts()).toEqual(before);
  });

  it('refuses schedules, identities, secrets and run prompts too (create and update)', async () => {
    const schedule = await api.post('/agent/schedules', {
      name: 'ok',
      cron_schedule: '0 9 * * *',
      prompt: 'daily',
    });
    expect(schedule.status).toBe(201);
    const identity = await api.post('/agent/identities', { name: 'ok' });
    expect(identity.status).toBe(201);
    const before = await counts();
    expectInvalid(
      await send(
        'post',
        '/agent/schedules',
        `{"name":"${LONE}","cron_schedule":"0 9 * * *","prompt":"daily"}`,
      ),
      'name',
    );
    expectInvalid(
      await send(
        'put',
        `/agent/schedules/${schedule.body.id}`,
        `{"name":"ok","cron_schedule":"0 9 * * *","enabled":true,"prompt":"${LONE}"}`,
      ),
      'prompt',
    );
    expectInvalid(await send('post', '/agent/identities', `{"name":"${LONE}"}`), 'name');
    expectInvalid(await send('post', '/secrets', `{"name":"TOKEN","value":"${LONE}"}`), 'value');
    expectInvalid(await send('put', '/secrets/TOKEN', `{"value":"${LONE}"}`), 'value');
    expectInvalid(await send('post', '/agent/runs', `{"prompt":"${LONE}"}`), 'prompt');
    expectInvalid(
      await send('post', '/agent/runs', `{"prompt":"ok","skills":["a","\\udc00"]}`),
      'skills[1]',
    );
    // A lone surrogate in a key is named, escaped, so the detail is valid text itself.
    expectInvalid(
      await send('post', '/agent/runs', `{"prompt":"ok","metadata":{"\\ud800":"v"}}`),
      'metadata.\\ud800',
    );
    expect(await counts()).toEqual(before);
    const kept = await api.get(`/agent/schedules/${schedule.body.id}`);
    expect(kept.body.prompt).toBe('daily');
  });

  it('refuses raw bytes that are not UTF-8 with 400, not U+FFFD text', async () => {
    const before = await counts();
    const url = new URL(`${app.baseUrl}/agent/runs`);
    const body = Buffer.concat([
      Buffer.from('{"prompt":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    const res = await new Promise<{ status: number; type: string; json: Record<string, unknown> }>(
      (resolve, reject) => {
        const req = httpRequest(
          url,
          { method: 'POST', headers: { ...auth, 'Content-Length': body.length } },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () =>
              resolve({
                status: response.statusCode ?? 0,
                type: String(response.headers['content-type']),
                json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      },
    );
    expect(res.status).toBe(400);
    expect(res.type).toMatch(/^application\/problem\+json/);
    expect(res.json).toMatchObject({ status: 400, detail: expect.stringMatching(/valid Unicode/) });
    expect(await counts()).toEqual(before);
  });

  it('answers 400 to invalid sequences in query and path parameters', async () => {
    for (const path of [
      '/agent/runs?cursor=%ED%A0%80',
      '/agent/runs?state=%E0%A4%A',
      '/agent/runs?%FF=1',
      '/agent/schedules?limit=%',
      '/agent/runs/%ED%A0%80',
      '/agent/runs/%E0%A4%A',
      '/agent/environments/%ED%A0%80',
    ]) {
      const res = await api.get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.status).toBe(400);
    }
    const query = await api.get('/agent/runs?cursor=%ED%A0%80');
    expect(query.body.detail).toBe('cursor: must be valid Unicode text');
    const before = await counts();
    expect((await api.delete('/agent/schedules/%ED%A0%80')).status).toBe(400);
    expect((await send('put', '/secrets/%ED%A0%80', '{"value":"x"}')).status).toBe(400);
    expect(await counts()).toEqual(before);
  });

  it('answers 404 to a non-ASCII path identifier and 400 to a body nested too deep (fuzz finds)', async () => {
    // Identifiers are ASCII columns: MySQL refused the comparison (500) before.
    for (const path of [
      '/factory/%E2%80%AErtl%EF%BB%BF/automations',
      `/agent/runs/${encodeURIComponent('部署')}`,
      `/agent/schedules/${encodeURIComponent('🚀')}`,
    ]) {
      const res = await api.get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.body).toMatchObject({
        status: 404,
        detail: expect.stringMatching(/no resource has this identifier/),
      });
    }
    const secret = await api.put(`/secrets/${encodeURIComponent('É')}`, { value: 'x' });
    expect(secret.status).toBe(404);
    // class-transformer recursed per level and overflowed the stack (500) on a few thousand.
    const before = await counts();
    let nested: unknown = 'x';
    for (let i = 0; i < 3000; i++) nested = i % 2 ? [nested] : { d: nested };
    const deep = await api.post('/agent/runs', {
      prompt: 'ok',
      config: { harness_auth_secrets: { codex_auth_secret_name: nested } },
    });
    expect(deep.status).toBe(400);
    expect(deep.body.detail).toMatch(
      /^config\.harness_auth_secrets\.codex_auth_secret_name(\.d|\[0\])+: nested deeper than 64 levels$/,
    );
    expect((await api.post('/agent/runs', { prompt: 'ok', metadata: nested })).status).toBe(400);
    expect(await counts()).toEqual(before);
  });

  it("answers a URL over Node's header limit with a 431 problem (fuzz find: an empty 431)", async () => {
    for (const url of [app.baseUrl, app.ingressUrl]) {
      const res = await fetch(`${url}/agent/runs?cursor=${'a'.repeat(20_000)}`, {
        headers: { Authorization: `Bearer ${app.apiKey}` },
      });
      expect(res.status).toBe(431);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.json()).toMatchObject({
        status: 431,
        detail: expect.stringMatching(/too large/),
      });
    }
  });

  it('refuses a list of objects holding an array, naming it (fuzz find: a 500)', async () => {
    const before = await counts();
    const files = await api.post('/factory-files/validate', {
      files: [{ path: 'factory.yaml', content: 'x' }, []],
    });
    expect(files.status).toBe(400);
    expect(files.body.detail).toMatch(/^files: each value in files must be an object/);
    const run = await api.post('/agent/runs', { prompt: 'ok', config: { secrets: [[]] } });
    expect(run.status).toBe(400);
    expect(run.body.detail).toMatch(/^config\.secrets: /);
    expect(await counts()).toEqual(before);
  });

  it('accepts valid non-ASCII text (emoji, CJK, combining marks) and reads it back identical', async () => {
    const text = 'déploiement 🚀 部署 e\u0301 👩‍💻 \u{1F600}';
    const run = await api.post('/agent/runs', { prompt: text, metadata: { k: text } });
    expect(run.status).toBe(200);
    const read = await api.get(`/agent/runs/${run.body.run_id}`);
    expect(read.body.prompt).toBe(text);
    const environment = await api.post('/agent/environments', { name: text });
    expect(environment.status).toBe(201);
    const factory = await api.post('/factory', { name: text });
    expect(factory.status).toBe(201);
    expect((await api.get(`/factory/${factory.body.uid}`)).body.name).toBe(text);
    const identity = await api.post('/agent/identities', { name: text });
    expect(identity.status).toBe(201);
    expect(identity.body.name).toBe(text);
    const listed = await api.get(`/agent/runs?q=${encodeURIComponent('部署')}`);
    expect(listed.status).toBe(200);
  });

  it('ingress stores and delivers a payload with an escaped lone surrogate byte-exact (202)', async () => {
    const factory = await createFactory(api, 'unicode-ingress');
    const hook = await createWebhook(api, factory, { name: 'raw-hook' });
    const local = hook.url.replace('http://hooks.example.test', app.ingressUrl);
    const body = '{"text":"\\ud800 and \\udc00 alone","emoji":"🚀"}';
    const res = await deliver(local, body, { Authorization: `Bearer ${hook.secret}` });
    expect(res.status).toBe(202);
    const log = await api.get(`/factory/${factory}/webhooks/${hook.uid}/deliveries`);
    const [entry] = log.body.deliveries as { id: string; size_bytes: number }[];
    expect(entry.size_bytes).toBe(Buffer.byteLength(body));
    const raw = await api
      .raw()
      .get(`${api.prefix}/factory/${factory}/webhooks/${hook.uid}/deliveries/${entry.id}/payload`)
      .set({ Authorization: `Bearer ${app.apiKey}` })
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(raw.status).toBe(200);
    expect(Buffer.compare(raw.body as Buffer, Buffer.from(body))).toBe(0);
  });
});
