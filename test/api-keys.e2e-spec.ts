import { ApiKeysService } from '../src/modules/teams';
import { apiClient } from './support/api-client';
import { isStream, openSse } from './support/sse-stream';
import { startTestApp } from './support/test-app';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

/** Team API keys over HTTP: admins create (shown once), list (never the secret) and revoke. */
describe('api keys over HTTP', () => {
  const { env, app, api } = useTestApp('api_keys', ['api'], {}, { model: false });
  const keyCount = async () =>
    Number(
      ((await app.dataSource.query(`SELECT COUNT(*) AS n FROM api_keys`)) as { n: string }[])[0].n,
    );

  it('creates a key with a role, shows it once, lists it without the secret, with last use', async () => {
    const created = await api.post('/api-keys', { name: 'ci bot', role: 'member' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'ci bot',
      role: 'member',
      last_used_at: null,
      expires_at: null,
      revoked_at: null,
    });
    const key = created.body.key as string;
    expect(key).toMatch(/^amb_[A-Za-z0-9]{12}_[A-Za-z0-9]{32}$/);
    expect(created.body.prefix).toBe(key.slice(4, 16));

    const member = apiClient(app.baseUrl, key);
    expect((await member.get('/agent/runs')).status).toBe(200);
    const listed = await waitFor(
      async () => (await api.get('/api-keys')).body.api_keys as Record<string, unknown>[],
      (keys) => keys.some((k) => k.id === created.body.id && k.last_used_at !== null),
      { what: 'the new key to show its last use' },
    );
    const entry = listed.find((k) => k.id === created.body.id)!;
    expect(Object.keys(entry).sort()).toEqual([
      'created_at',
      'expires_at',
      'id',
      'last_used_at',
      'name',
      'prefix',
      'revoked_at',
      'role',
    ]);
    expect(JSON.stringify(listed)).not.toContain(key);
    // The keys of people only: the bootstrap key (an admin's) is listed, with its role.
    expect(listed.find((k) => k.name === 'bootstrap')).toMatchObject({ role: 'admin' });
  });

  it('refuses bad input naming the field, and creates nothing', async () => {
    const before = await keyCount();
    const cases: [unknown, RegExp][] = [
      [{ role: 'member' }, /^name: /],
      [{ name: '', role: 'member' }, /^name: /],
      [{ name: '   ', role: 'member' }, /^name: must not be blank/],
      [{ name: 'x'.repeat(129), role: 'member' }, /^name: /],
      [{ name: 'k' }, /^role: /],
      [{ name: 'k', role: 'owner' }, /^role: .*admin, member, viewer/],
      [{ name: 'k', role: 'viewer', expires_at: 'tomorrow' }, /^expires_at: must be an RFC 3339/],
      [
        { name: 'k', role: 'viewer', expires_at: '2001-01-01T00:00:00Z' },
        /^expires_at: must be in the future/,
      ],
    ];
    for (const [body, detail] of cases) {
      const res = await api.post('/api-keys', body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.detail).toMatch(detail);
    }
    expect(await keyCount()).toBe(before);
  });

  it('lets only admins manage keys: 403 naming the role and the permission', async () => {
    const member = (await api.post('/api-keys', { name: 'm', role: 'member' })).body;
    const viewer = (await api.post('/api-keys', { name: 'v', role: 'viewer' })).body;
    for (const [role, key] of [
      ['member', member.key],
      ['viewer', viewer.key],
    ]) {
      const client = apiClient(app.baseUrl, key as string);
      const create = await client.post('/api-keys', { name: 'escalate', role: 'admin' });
      expect(create.status).toBe(403);
      expect(create.body.detail).toBe(
        `role "${role}" lacks permission "api_keys.write" (held by: admin)`,
      );
      expect((await client.get('/api-keys')).status).toBe(403);
      expect((await client.delete(`/api-keys/${member.id}`)).status).toBe(403);
    }
    expect((await apiClient(app.baseUrl, member.key).get('/agent/runs')).status).toBe(200);
  });

  it('revokes at once on every replica and ends the streams the key opened', async () => {
    const created = (await api.post('/api-keys', { name: 'streamer', role: 'viewer' })).body;
    const run = await api.post('/agent/runs', { prompt: 'watched' });
    expect(run.status).toBe(200);
    const stream = await openSse(`${app.baseUrl}/agent/runs/${run.body.run_id}/stream`, {
      apiKey: created.key,
    });
    if (!isStream(stream)) throw new Error(`stream refused: ${JSON.stringify(stream.body)}`);
    await stream.next((e) => e.event === 'run', 'the first run event');

    const replica = await startTestApp(env, ['api']);
    try {
      const onReplica = apiClient(replica.baseUrl, created.key);
      expect((await onReplica.get('/agent/runs')).status).toBe(200);

      expect((await api.delete(`/api-keys/${created.id}`)).status).toBe(204);
      for (const base of [app.baseUrl, replica.baseUrl]) {
        const refused = await apiClient(base, created.key).get('/agent/runs');
        expect(refused.status).toBe(401);
      }
      const ended = await stream.next((e) => e.event === 'error', 'the revocation error');
      expect(JSON.parse(ended.data).detail).toMatch(/API key of this stream was revoked/);
      await stream.ended;
    } finally {
      stream.close();
      await replica.close();
    }

    const listed = (await api.get('/api-keys')).body.api_keys as {
      id: string;
      revoked_at: string;
    }[];
    expect(listed.find((k) => k.id === created.id)?.revoked_at).toEqual(expect.any(String));
    // Revoking twice is harmless; an unknown key, or an agent's (managed under its identity), is 404.
    expect((await api.delete(`/api-keys/${created.id}`)).status).toBe(204);
    expect((await api.delete('/api-keys/not-a-key')).status).toBe(404);
    const agent = await api.post('/agent/identities', { name: 'keyed-agent' });
    const agentKey = await api.post(`/agent/identities/${agent.body.uid}/api-keys`, {});
    expect((await api.delete(`/api-keys/${agentKey.body.id}`)).status).toBe(404);
    expect(
      (await api.get('/api-keys')).body.api_keys.map((k: { id: string }) => k.id),
    ).not.toContain(agentKey.body.id);
  });

  it('stops authenticating a key once it expires', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const created = await api.post('/api-keys', {
      name: 'temporary',
      role: 'viewer',
      expires_at: expiresAt,
    });
    expect(created.status).toBe(201);
    expect(created.body.expires_at).toBe(expiresAt);
    const client = apiClient(app.baseUrl, created.body.key);
    expect((await client.get('/agent/runs')).status).toBe(200);
    // Its hour passes (the row is moved, not the clock). No API changes a key's expiry, so the
    // edit behind the server's back is announced as a change would be (the cached key is dropped);
    // a key that expires on its own is cached no longer than its expires_at.
    await app.dataSource.query(`UPDATE api_keys SET expires_at = ? WHERE id = ?`, [
      new Date(Date.now() - 1000),
      created.body.id,
    ]);
    await app.ambient.app.get(ApiKeysService).keysChanged([created.body.id]);
    const refused = await client.get('/agent/runs');
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toBe('send a valid API key as "Authorization: Bearer <key>"');
  });
});
