import { apiClient } from './support/api-client';
import { TcpProxy } from './support/tcp-proxy';
import {
  createTestEnvironment,
  MYSQL_URL,
  startTestApp,
  TestApp,
  TestEnvironment,
} from './support/test-app';
import { waitFor } from './support/wait';
import { createFactory, createWebhook, deliver } from './support/webhook-helpers';

const DAY = 86_400_000;
const HOUSEKEEPING_BATCH = 2;

describe('delivery log retention (newest 50 and 7 days) and dedup memory', () => {
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let factory: string;

  beforeAll(async () => {
    env = createTestEnvironment('wh_retention', 'http://127.0.0.1:9/v1');
    app = await startTestApp(env, ['api', 'ingress', 'worker'], {
      'webhooks.deliveriesPerMinute': 1000,
      'webhooks.housekeepingIntervalMs': 200,
      'webhooks.housekeepingBatch': HOUSEKEEPING_BATCH,
    });
    api = apiClient(app.baseUrl, app.apiKey);
    factory = await createFactory(api);
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
  });

  async function hookWithDeliveries(name: string, count: number, ageMs: number) {
    const hook = await createWebhook(api, factory, { name });
    const url = `${app.ingressUrl}/webhooks/w/${hook.uid}`;
    for (let i = 0; i < count; i++) {
      const res = await deliver(url, `{"i":${i}}`, {
        Authorization: `Bearer ${hook.secret}`,
        'X-Ambient-Delivery-Id': `${name}-${i}`,
      });
      expect(res.status).toBe(202);
    }
    // Age the entries as if they had arrived `ageMs` ago (and been evaluated long since).
    await app.dataSource.query(
      `UPDATE webhook_deliveries SET received_at = ?, evaluation_due_at = NULL WHERE webhook_id = ?`,
      [new Date(Date.now() - ageMs), hook.uid],
    );
    return { hook, url, auth: { Authorization: `Bearer ${hook.secret}` } };
  }

  const count = async (webhookId: string) =>
    Number(
      (
        (await app.dataSource.query(
          `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ?`,
          [webhookId],
        )) as { n: string }[]
      )[0].n,
    );

  it('prunes entries older than 7 days beyond the newest 50, and forgets their delivery ids with them', async () => {
    const old = await hookWithDeliveries('old', 60, 8 * DAY);
    const recent = await hookWithDeliveries('recent', 55, 1 * DAY);
    await waitFor(
      () => count(old.hook.uid),
      (n) => n === 50,
      { what: 'housekeeping to prune the old log' },
    );
    const page = await api.get(`/factory/${factory}/webhooks/${old.hook.uid}/deliveries?limit=100`);
    const ids = page.body.deliveries.map((d: { delivery_id: string }) => d.delivery_id);
    expect(ids).toHaveLength(50);
    expect(ids[0]).toBe('old-59');
    expect(ids.at(-1)).toBe('old-10');
    expect(await count(recent.hook.uid)).toBe(55); // younger than 7 days: all kept

    const forgotten = await deliver(old.url, '{"again":1}', {
      ...old.auth,
      'X-Ambient-Delivery-Id': 'old-3',
    });
    const remembered = await deliver(old.url, '{"again":2}', {
      ...old.auth,
      'X-Ambient-Delivery-Id': 'old-30',
    });
    expect([forgotten.status, remembered.status]).toEqual([202, 202]);
    const latest = (
      await api.get(`/factory/${factory}/webhooks/${old.hook.uid}/deliveries?limit=2`)
    ).body.deliveries;
    expect(
      latest.map((d: { delivery_id: string; status: string }) => [d.delivery_id, d.status]),
    ).toEqual([
      ['old-30', 'Duplicate'],
      ['old-3', 'Accepted'],
    ]);
  });

  it('reaches a webhook with prunable entries behind more protected idle webhooks than one pass takes', async () => {
    // Fewer than 50 entries, all older than the ones to prune: nothing of theirs may go, yet
    // they have entries past the 7 days, and they were created (lower ids) first.
    const idle = [];
    for (let i = 0; i <= HOUSEKEEPING_BATCH; i++) {
      idle.push(await hookWithDeliveries(`idle${i}`, 3, 30 * DAY));
    }
    const busy = await hookWithDeliveries('busy', 53, 8 * DAY);
    await waitFor(
      () => count(busy.hook.uid),
      (n) => n === 50,
      { what: 'housekeeping to reach the webhook behind the idle ones' },
    );
    for (const { hook } of idle) expect(await count(hook.uid)).toBe(3);
  });

  it('answers 503 when the delivery cannot be committed, records nothing, and takes the retry', async () => {
    const hook = await createWebhook(api, factory, { name: 'commit-fails' });
    const url = `${app.ingressUrl}/webhooks/w/${hook.uid}`;
    const headers = {
      Authorization: `Bearer ${hook.secret}`,
      'X-Ambient-Delivery-Id': 'commit-1',
    };
    // The webhook lookup works; only the INSERT of the accepted delivery fails (a full disk, say).
    await app.dataSource.query(
      `CREATE TRIGGER refuse_test_deliveries BEFORE INSERT ON webhook_deliveries FOR EACH ROW
       BEGIN
         IF NEW.webhook_id = '${hook.uid}' AND NEW.status = 'accepted' THEN
           SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the disk is full (test)';
         END IF;
       END`,
    );
    let refused;
    try {
      refused = await deliver(url, '{"try":1}', headers);
    } finally {
      await app.dataSource.query('DROP TRIGGER refuse_test_deliveries');
    }
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await count(hook.uid)).toBe(0);
    // Nothing was accepted, so the sender's retry is no duplicate.
    const retried = await deliver(url, '{"try":1}', headers);
    expect(retried).toMatchObject({ status: 202, body: { delivery_id: 'commit-1' } });
    const log = (await api.get(`/factory/${factory}/webhooks/${hook.uid}/deliveries`)).body;
    expect(log.deliveries.map((d: { status: string }) => d.status)).toEqual(['Accepted']);
  });
});

describe('ingress without MySQL', () => {
  let env: TestEnvironment;
  let app: TestApp;
  const proxy = new TcpProxy(new URL(MYSQL_URL).hostname, Number(new URL(MYSQL_URL).port || 3306));

  beforeAll(async () => {
    await proxy.start();
    env = createTestEnvironment('wh_nodb', 'http://127.0.0.1:9/v1');
    const viaProxy = new URL(env.databaseUrl);
    viaProxy.port = String(proxy.port);
    viaProxy.hostname = '127.0.0.1';
    app = await startTestApp(env, ['api', 'ingress'], { 'database.url': viaProxy.toString() });
  });

  afterAll(async () => {
    await app?.close();
    await proxy.stop();
    await env?.destroy();
  });

  it('answers 503 with Retry-After (never 202) while MySQL is unreachable, and 202 once it is back', async () => {
    const api = apiClient(app.baseUrl, app.apiKey);
    const factory = await createFactory(api);
    const hook = await createWebhook(api, factory, { name: 'nodb' });
    const url = `${app.ingressUrl}/webhooks/w/${hook.uid}`;
    const auth = { Authorization: `Bearer ${hook.secret}` };
    await proxy.stop();
    const down = await deliver(url, '{"while":"down"}', auth);
    expect(down.status).toBe(503);
    expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(down.body).toMatchObject({ status: 503, retryable: true });
    await proxy.start();
    const up = await waitFor(
      () => deliver(url, '{"while":"up"}', auth),
      (r) => r.status !== 503,
      { what: 'MySQL to answer again' },
    );
    expect(up.status).toBe(202);
    const bodies = (await app.dataSource.query(
      `SELECT CAST(payload AS CHAR) AS p FROM webhook_deliveries WHERE webhook_id = ?`,
      [hook.uid],
    )) as { p: string }[];
    expect(bodies.map((b) => b.p)).toEqual(['{"while":"up"}']);
  });
});
