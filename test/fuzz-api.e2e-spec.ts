import fc from 'fast-check';
import {
  HUGE,
  mutate,
  mutation,
  nastyValue,
  fromSchema,
  NASTY_STRINGS,
  OpenApiDocument,
  OpenApiOperation,
} from './support/openapi-fuzz';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';
import { createFactory, createWebhook } from './support/webhook-helpers';

/**
 * Property-based fuzzing of every POST/PUT/PATCH body, every GET's path and query parameters of the
 * served OpenAPI document, and of the webhook ingress. Seeded: FUZZ_SEED=<n> replays a run, and
 * FUZZ_RUNS=<n> changes how many requests the API property sends.
 */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const API_RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const INGRESS_RUNS = Math.ceil(API_RUNS / 4);

/** The main tables: a refused request must change none of their row counts. */
const TABLES = [
  'runs',
  'environments',
  'schedules',
  'team_secrets',
  'webhooks',
  'factories',
  'users',
  'agent_identities',
  'api_keys',
];
const COUNT_SQL = `SELECT ${TABLES.map((t) => `(SELECT COUNT(*) FROM \`${t}\`) AS \`${t}\``).join(', ')}`;

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

interface Answer {
  status: number;
  type: string;
  text: string;
}

/** Percent-encodes text; lone surrogates (which encodeURIComponent refuses) become their CESU bytes. */
function encode(text: string): string {
  return text
    .split(/([\uD800-\uDFFF])/)
    .map((part) => (/^[\uD800-\uDFFF]$/.test(part) ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

function describeRequest(request: FuzzRequest): string {
  const body =
    request.body === undefined
      ? ''
      : Buffer.isBuffer(request.body)
        ? `<${request.body.length} bytes>`
        : request.body.length > 400
          ? `${request.body.slice(0, 400)}… (${request.body.length} chars)`
          : request.body;
  const path = request.path.length > 300 ? `${request.path.slice(0, 300)}…` : request.path;
  return `${request.method} ${path} ${JSON.stringify(request.headers)} ${body}`;
}

async function send(base: string, request: FuzzRequest): Promise<Answer> {
  const res = await fetch(`${base}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    redirect: 'manual',
  });
  const type = res.headers.get('content-type') ?? '';
  // A live stream (GET …/runs/{id}/stream) that was accepted never ends: its headers are the answer.
  if (type.startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, type, text: '' };
  }
  return { status: res.status, type, text: await res.text() };
}

/** Fails unless the answer is no 5xx, and a 4xx is a problem+json whose `status` is the HTTP one. */
function checkAnswer(request: FuzzRequest, answer: Answer): void {
  const where = `${describeRequest(request)} → ${answer.status} ${answer.text.slice(0, 300)}`;
  if (answer.status >= 500) throw new Error(`5xx: ${where}`);
  if (answer.status >= 400) {
    if (!answer.type.startsWith('application/problem+json')) {
      throw new Error(`4xx not application/problem+json (${answer.type}): ${where}`);
    }
    let status: unknown;
    try {
      status = (JSON.parse(answer.text) as { status?: unknown }).status;
    } catch {
      throw new Error(`4xx body is not JSON: ${where}`);
    }
    if (status !== answer.status) throw new Error(`4xx body status ${String(status)}: ${where}`);
  }
}

async function runProperty<T>(
  name: string,
  arbitrary: fc.Arbitrary<T>,
  runs: number,
  predicate: (value: T) => Promise<void>,
): Promise<void> {
  const details = await fc.check(fc.asyncProperty(arbitrary, predicate), {
    seed: SEED,
    numRuns: runs,
    // Shrinking replays requests against a live server: report the first failure as found.
    endOnFailure: true,
  });
  if (details.failed) {
    // The predicate's own message names the request, shortened; the counterexample can be 200 KB.
    const cause = details.errorInstance instanceof Error ? details.errorInstance.message : 'failed';
    throw new Error(
      `${name} failed after ${details.numRuns} requests; reproduce with FUZZ_SEED=${SEED}\n${cause}`,
    );
  }
}

describe(`fuzz: generated requests never get a 5xx (FUZZ_SEED=${SEED})`, () => {
  let doc: OpenApiDocument;
  let origin: string;
  const existing: string[] = [];
  /** Keys of the other roles: some requests are sent with them (and refused with 403). */
  const roleKeys: { id: string; key: string }[] = [];

  const { app, api } = useTestApp(
    'fuzz',
    ['api', 'ingress'],
    {
      'webhooks.baseUrl': 'http://hooks.example.test',
      'webhooks.deliveriesPerMinute': 1_000_000,
      'webhooks.authFailuresPerMinute': 1_000_000,
    },
    { model: false },
  );

  beforeAll(async () => {
    origin = new URL(app.baseUrl).origin;
    doc = (await api.get('/openapi.json')).body as OpenApiDocument;
    // Real resources, so generated paths reach past "not found" too.
    const factory = await createFactory(api, 'fuzz');
    const hook = await createWebhook(api, factory, { name: 'fuzz-hook' });
    const schedule = await api.post('/agent/schedules', {
      name: 'fuzz',
      cron_schedule: '0 9 * * *',
      prompt: 'p',
    });
    const identity = await api.post('/agent/identities', { name: 'fuzz' });
    const environment = await api.post('/agent/environments', { name: 'fuzz' });
    const run = await api.post('/agent/runs', { prompt: 'fuzz' });
    await api.post('/secrets', { name: 'FUZZ', value: 'v' });
    for (const role of ['member', 'viewer']) {
      roleKeys.push((await api.post('/api-keys', { name: `fuzz ${role}`, role })).body);
    }
    existing.push(
      factory,
      hook.uid,
      schedule.body.id as string,
      identity.body.uid as string,
      environment.body.uid as string,
      run.body.run_id as string,
      'FUZZ',
    );
  });

  function operations(methods: string[]): { method: string; path: string; op: OpenApiOperation }[] {
    const out: { method: string; path: string; op: OpenApiOperation }[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of methods) if (item[method]) out.push({ method, path, op: item[method] });
    }
    return out;
  }

  /** Path parameter values: real ids, valid-looking ids that do not exist, garbage. */
  const pathValue = (): fc.Arbitrary<string> =>
    fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...existing).map(encode) },
      {
        weight: 2,
        arbitrary: fc.oneof(
          fc.uuid().map(encode),
          fc.stringMatching(/^[A-Za-z0-9_-]{22}$/),
          fc.nat().map(String),
          fc.stringMatching(/^[A-Z_]{1,12}$/),
        ),
      },
      {
        weight: 2,
        arbitrary: fc.constantFrom(...NASTY_STRINGS.filter((s) => s.length < 1000)).map(encode),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom('%', '%zz', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%00', '..', '.'),
      },
    );

  function fillPath(path: string, values: string[]): string {
    let i = 0;
    return `${api.prefix}${path.replace(/\{[^}]+\}/g, () => values[i++ % values.length] ?? 'x')}`;
  }

  function authHeaders(kind: number): Record<string, string> {
    if (kind === 0) return {};
    if (kind === 1) return { Authorization: 'Bearer amb_not_a_real_key_at_all' };
    if (kind === 2 || kind === 3) return { Authorization: `Bearer ${roleKeys[kind - 2].key}` };
    return { Authorization: `Bearer ${app.apiKey}` };
  }

  it(`sends ${API_RUNS} generated bodies, paths and queries: no 5xx, problem+json 4xx that write nothing`, async () => {
    const withBody = operations(['post', 'put', 'patch']);
    const queried = operations(['get']).filter((o) =>
      (o.op.parameters ?? []).some((p) => p.in === 'query' || p.in === 'path'),
    );
    expect(withBody.length).toBeGreaterThan(20);
    expect(queried.length).toBeGreaterThan(10);
    expect(withBody.map((o) => `${o.method} ${o.path}`)).toContain('post /api-keys');

    const bodyRequest: fc.Arbitrary<FuzzRequest> = fc
      .constantFrom(...withBody)
      .chain(({ method, path, op }) => {
        const schema = op.requestBody?.content?.['application/json']?.schema ?? { type: 'object' };
        const valid = fromSchema(schema, doc);
        const text: fc.Arbitrary<string | Buffer> = fc.oneof(
          { weight: 4, arbitrary: valid.map((v) => JSON.stringify(v) ?? 'null') },
          {
            weight: 6,
            arbitrary: fc
              .tuple(valid, mutation)
              .map(([v, m]) => JSON.stringify(mutate(v, m)) ?? 'null'),
          },
          {
            weight: 1,
            arbitrary: fc.constantFrom<string | Buffer>(
              '',
              '{',
              '{"a":',
              'null',
              '[]',
              '"\\ud800"',
              '{"prompt":"\\u0000"}',
              Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
              Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
              `{"a":"${'b'.repeat(HUGE)}"}`,
              `${'['.repeat(5000)}${']'.repeat(5000)}`,
            ),
          },
        );
        return fc.record({
          method: fc.constant(method.toUpperCase()),
          path: fc.array(pathValue(), { minLength: 3, maxLength: 3 }).map((v) => fillPath(path, v)),
          headers: fc
            .tuple(
              fc.nat({ max: 19 }),
              fc.oneof(
                { weight: 12, arbitrary: fc.constant('application/json') },
                {
                  weight: 1,
                  arbitrary: fc.constantFrom('text/plain', 'application/json; charset=latin1'),
                },
              ),
            )
            .map(([auth, type]) => ({ ...authHeaders(auth), 'Content-Type': type })),
          body: text,
        });
      });

    const queryRequest: fc.Arbitrary<FuzzRequest> = fc
      .constantFrom(...queried)
      .chain(({ path, op }) => {
        const names = (op.parameters ?? []).filter((p) => p.in === 'query');
        const params = names.map((p) =>
          fc.option(
            fc.oneof(
              fromSchema(p.schema ?? { type: 'string' }, doc).map((v) => encode(asText(v))),
              nastyValue.map((v) => encode(asText(v))),
              fc.constantFrom('%', '%ED%A0%80', '%FF', '-1', '1e400', '', '0x10', '[]'),
            ),
            { nil: undefined },
          ),
        );
        return fc.record({
          method: fc.constant('GET'),
          path: fc
            .tuple(fc.array(pathValue(), { minLength: 3, maxLength: 3 }), fc.tuple(...params))
            .map(([values, chosen]) => {
              const query = chosen
                .map((v, i) => (v === undefined ? null : `${names[i].name}=${v.slice(0, 5000)}`))
                .filter((q): q is string => q !== null)
                .join('&');
              return `${fillPath(path, values)}${query ? `?${query}` : ''}`;
            }),
          headers: fc.nat({ max: 19 }).map(authHeaders),
        });
      });

    let before = (await app.dataSource.query(COUNT_SQL)) as Record<string, string>[];
    let sent = 0;
    const statuses: Record<number, number> = {};
    const started = Date.now();
    await runProperty(
      'API fuzz',
      fc.oneof({ weight: 3, arbitrary: bodyRequest }, { weight: 1, arbitrary: queryRequest }),
      API_RUNS,
      async (request) => {
        const answer = await send(origin, request);
        sent++;
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        checkAnswer(request, answer);
        const after = (await app.dataSource.query(COUNT_SQL)) as Record<string, string>[];
        if (answer.status >= 400 && JSON.stringify(after) !== JSON.stringify(before)) {
          throw new Error(
            `a ${answer.status} wrote rows: ${JSON.stringify(before)} → ${JSON.stringify(after)}: ${describeRequest(request)}`,
          );
        }
        before = after;
      },
    );
    process.stdout.write(
      `API fuzz: ${sent} requests in ${Date.now() - started} ms (seed ${SEED}), statuses ${JSON.stringify(statuses)}\n`,
    );
    expect(sent).toBeGreaterThanOrEqual(API_RUNS);
    // The generator must get past validation and lookups, not only be refused.
    expect(Object.keys(statuses).some((status) => Number(status) < 300)).toBe(true);
  }, 600_000);

  it('revokes only the key a DELETE /api-keys/{id} names, whatever the generated id', async () => {
    const doomed = (await api.post('/api-keys', { name: 'fuzz doomed', role: 'viewer' })).body;
    const id = fc.oneof(
      { weight: 1, arbitrary: fc.constant(doomed.id as string) },
      { weight: 6, arbitrary: pathValue() },
    );
    const deletion: fc.Arbitrary<FuzzRequest> = fc.record({
      method: fc.constant('DELETE'),
      path: id.map((value) => `${api.prefix}/api-keys/${value}`),
      headers: fc.nat({ max: 19 }).map(authHeaders),
    });
    const statuses: Record<number, number> = {};
    await runProperty(
      'api-keys DELETE fuzz',
      deletion,
      Math.ceil(API_RUNS / 10),
      async (request) => {
        const answer = await send(origin, request);
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        checkAnswer(request, answer);
        if (answer.status === 204 && !request.path.endsWith(`/${doomed.id}`)) {
          throw new Error(`204 for a key that is not the doomed one: ${describeRequest(request)}`);
        }
      },
    );
    const revoked = (await app.dataSource.query(
      `SELECT id FROM api_keys WHERE revoked_at IS NOT NULL AND run_id IS NULL`,
    )) as { id: string }[];
    expect(revoked.map((r) => r.id).filter((r) => r !== doomed.id)).toEqual([]);
    for (const { key } of roleKeys) {
      expect((await apiClient(app.baseUrl, key).get('/agent/models')).status).toBe(200);
    }
  }, 300_000);

  it(`sends ${INGRESS_RUNS} random deliveries to the ingress: only 202, 400, 401, 404, 413 or 429`, async () => {
    const factory = await createFactory(api, 'fuzz-ingress');
    const token = await createWebhook(api, factory, { name: 'fz-token' });
    const urlToken = await createWebhook(api, factory, { name: 'fz-url', auth_mode: 'url_token' });
    const signed = await createWebhook(api, factory, {
      name: 'fz-sig',
      auth_mode: 'signature',
      signature_scheme: 'standard_webhooks',
    });
    const ingress = app.ingressUrl;
    const latin1 = fc.string({
      unit: fc.oneof(
        fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
        fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)),
      ),
      maxLength: 200,
    });
    const path = fc.oneof(
      fc.constantFrom(
        `/webhooks/w/${token.uid}`,
        `/webhooks/w/${token.uid}/extra`,
        `/webhooks/w/${urlToken.uid}/${urlToken.secret ?? ''}`,
        `/webhooks/w/${urlToken.uid}`,
        `/webhooks/w/${signed.uid}`,
        '/webhooks/w/AAAAAAAAAAAAAAAAAAAAAA',
        '/webhooks/w/%ED%A0%80',
        '/webhooks/w/%',
        '/webhooks/w/',
      ),
      fc
        .tuple(fc.constantFrom(token.uid, urlToken.uid, signed.uid), latin1)
        .map(([uid, tail]) => `/webhooks/w/${uid}/${encodeURIComponent(tail)}`),
    );
    const headerNames = fc.constantFrom(
      'Content-Type',
      'X-Ambient-Delivery-Id',
      'X-GitHub-Delivery',
      'X-Hub-Signature-256',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'svix-id',
      'svix-timestamp',
      'svix-signature',
      'Stripe-Signature',
      'X-Slack-Signature',
      'X-Slack-Request-Timestamp',
      'Content-Encoding',
      'X-Request-Id',
    );
    const body = fc.oneof(
      fc.json({ maxDepth: 4 }),
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
      fc.constantFrom<string | Buffer>(
        '{"text":"\\ud800"}',
        '',
        `"${'a'.repeat(300 * 1024)}"`,
        `${'['.repeat(5000)}${']'.repeat(5000)}`,
        Buffer.from([0xff, 0xfe, 0x00]),
      ),
    );
    const delivery: fc.Arbitrary<FuzzRequest> = fc.record({
      method: fc.constant('POST'),
      path,
      body,
      headers: fc
        .tuple(
          fc.dictionary(headerNames, latin1, { maxKeys: 4 }),
          fc.constantFrom<Record<string, string>>(
            {},
            { Authorization: `Bearer ${token.secret ?? ''}` },
            { Authorization: 'Bearer wrong' },
          ),
        )
        .map(([random, auth]) => ({ ...random, ...auth })),
    });
    const allowed = new Set([202, 400, 401, 404, 413, 429]);
    let sent = 0;
    const statuses: Record<number, number> = {};
    const started = Date.now();
    await runProperty('ingress fuzz', delivery, INGRESS_RUNS, async (request) => {
      const answer = await send(ingress, request);
      sent++;
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      if (!allowed.has(answer.status)) {
        throw new Error(
          `ingress ${answer.status}: ${describeRequest(request)} → ${answer.text.slice(0, 300)}`,
        );
      }
    });
    process.stdout.write(
      `ingress fuzz: ${sent} requests in ${Date.now() - started} ms (seed ${SEED}), statuses ${JSON.stringify(statuses)}\n`,
    );
  }, 600_000);
});
