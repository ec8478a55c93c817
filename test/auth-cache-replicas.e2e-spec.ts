import type Redis from 'ioredis';
import type { Socket } from 'node:net';
import { Invalidations } from '../src/common/cache/invalidations';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { UserDirectoryService } from '../src/modules/teams/auth/user-directory.service';
import { apiClient } from './support/api-client';
import { startTestApp, TestApp } from './support/test-app';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';
import { createFactory, createWebhook, deliver } from './support/webhook-helpers';

/**
 * API keys and webhooks are cached in each process; every change that makes an entry stale is
 * broadcast on Redis before its request is answered. Two replicas on one database and Redis:
 * each key (or webhook) is first used twice on replica B, so B serves it from its cache, then
 * changed on replica A; the very next request on B must see the change.
 */
describe('cached keys and webhooks across two replicas', () => {
  // Long enough that only B's acknowledgement, never the bound, ends A's wait here.
  const settings = { 'redis.cacheAckTimeoutMs': 60_000 };
  const { app, api, env } = useTestApp('auth_cache', ['api', 'ingress'], {
    ...settings,
    'webhooks.baseUrl': 'http://hooks.example.test',
  });
  let b: TestApp;
  const onB = (key: string) => apiClient(b.baseUrl, key);

  beforeAll(async () => {
    b = await startTestApp(env, ['api', 'ingress'], settings);
  });

  function subscriberOf(replica: TestApp): Redis {
    const invalidations = replica.ambient.app.get(Invalidations);
    return (invalidations as unknown as { subscriber: Redis }).subscriber;
  }

  afterAll(async () => {
    await b?.close();
  });

  async function cachedOnB(key: string, path = '/agent/runs'): Promise<void> {
    for (let i = 0; i < 2; i++) expect((await onB(key).get(path)).status).toBe(200);
  }

  it('a key revoked on A is refused on B at once', async () => {
    const created = (await api.post('/api-keys', { name: 'revoked', role: 'member' })).body;
    await cachedOnB(created.key);
    expect((await api.delete(`/api-keys/${created.id}`)).status).toBe(204);
    expect((await onB(created.key).get('/agent/runs')).status).toBe(401);
  });

  it("a person's key loses admin endpoints on B as soon as A records the person as member", async () => {
    const directory = app.ambient.app.get(UserDirectoryService);
    const person = { team: 'default', email: 'pat@example.test', displayName: 'Pat' };
    const admin = await directory.principalOf({ ...person, role: 'admin' });
    // A key without a role of its own acts with its user's.
    const { key } = await app.ambient.app
      .get(ApiKeysService)
      .create({ id: admin!.userId, teamId: admin!.teamId }, 'pat');
    await cachedOnB(key, '/api-keys');
    await directory.principalOf({ ...person, role: 'member' });
    expect((await onB(key).get('/api-keys')).status).toBe(403);
    expect((await onB(key).get('/agent/runs')).status).toBe(200);
  });

  it('a change on A is answered only once B has applied it, however late B reads', async () => {
    const created = (await api.post('/api-keys', { name: 'slow reader', role: 'member' })).body;
    await cachedOnB(created.key);
    const stream = subscriberOf(b).stream as Socket;
    stream.pause();
    let answered = false;
    const revoking = api.delete(`/api-keys/${created.id}`).then((response) => {
      answered = true;
      return response;
    });
    try {
      // The broadcast has reached B's socket, and B has not read it: B still serves its entry.
      await waitFor(
        () => Promise.resolve(stream.readableLength),
        (buffered) => buffered > 0,
        { what: "the invalidation to reach B's subscriber" },
      );
      expect((await onB(created.key).get('/agent/runs')).status).toBe(200);
      expect(answered).toBe(false);
    } finally {
      stream.resume();
    }
    expect((await revoking).status).toBe(204);
    expect((await onB(created.key).get('/agent/runs')).status).toBe(401);
  });

  it('an agent identity deleted on A: its keys are refused on B at once', async () => {
    const agent = (await api.post('/agent/identities', { name: 'Short-lived' })).body;
    const key = (await api.post(`/agent/identities/${agent.uid}/api-keys`, {})).body.key as string;
    await cachedOnB(key);
    expect((await api.delete(`/agent/identities/${agent.uid}`)).status).toBe(204);
    expect((await onB(key).get('/agent/runs')).status).toBe(401);
  });

  it('a webhook disabled, rotated or deleted on A is answered so on B at once', async () => {
    const factory = await createFactory(api);
    const hook = await createWebhook(api, factory, { name: 'cached-hook' });
    const local = hook.url.replace('http://hooks.example.test', b.ingressUrl);
    const send = (secret: string | null) =>
      deliver(local, '{"a":1}', { Authorization: `Bearer ${secret}` });
    for (let i = 0; i < 2; i++) expect((await send(hook.secret)).status).toBe(202);

    const base = `/factory/${factory}/webhooks/${hook.uid}`;
    expect((await api.post(`${base}/disable`)).status).toBe(200);
    expect((await send(hook.secret)).status).toBe(404);
    expect((await api.post(`${base}/enable`)).status).toBe(200);
    expect((await send(hook.secret)).status).toBe(202);
    expect((await send(hook.secret)).status).toBe(202);

    const rotated = (await api.post(`${base}/rotate-secret`)).body.secret as string;
    expect((await send(hook.secret)).status).toBe(401);
    expect((await send(rotated)).status).toBe(202);

    expect((await api.delete(base)).status).toBe(204);
    expect((await send(rotated)).status).toBe(404);
  });

  it('B caches nothing while its invalidation channel is down, and again once it is back', async () => {
    const created = (await api.post('/api-keys', { name: 'unheard', role: 'member' })).body;
    await cachedOnB(created.key);
    const invalidations = b.ambient.app.get(Invalidations);
    const subscriber = subscriberOf(b);
    const port = (subscriber as unknown as { stream: { localPort: number } }).stream.localPort;
    const admin = (invalidations as unknown as { redis: Redis }).redis;
    await admin.client('KILL', 'ADDR', `127.0.0.1:${port}`).catch(() => undefined);
    await waitFor(
      () => Promise.resolve(invalidations.live),
      (live) => !live,
      { what: "B's subscription to drop" },
    );
    // A change no one hears of (written in SQL): B, not hearing changes, reads the row.
    await app.dataSource.query(`UPDATE api_keys SET revoked_at = ? WHERE id = ?`, [
      new Date(),
      created.id,
    ]);
    expect((await onB(created.key).get('/agent/runs')).status).toBe(401);
    await waitFor(
      () => Promise.resolve(invalidations.live),
      (live) => live,
      { what: "B's subscription to come back" },
    );
    const other = (await api.post('/api-keys', { name: 'heard again', role: 'member' })).body;
    await cachedOnB(other.key);
    expect((await api.delete(`/api-keys/${other.id}`)).status).toBe(204);
    expect((await onB(other.key).get('/agent/runs')).status).toBe(401);
  });
});
