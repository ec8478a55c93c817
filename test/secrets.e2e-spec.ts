import { apiClient } from './support/api-client';
import { startTestApp } from './support/test-app';
import { useTestApp } from './support/use-test-app';
import { createFactory, createWebhook, definitionFiles } from './support/webhook-helpers';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';

describe('team secrets (/secrets)', () => {
  let member: ReturnType<typeof apiClient>;

  const { env, app, api } = useTestApp('secrets', ['api'], {}, { model: false });

  beforeAll(async () => {
    const teams = app.ambient.app.get(TeamsService, { strict: false });
    const team = (await teams.findByName('default'))!;
    const user = await teams.createUser(team, { displayName: 'Member', role: 'member' });
    const { key } = await app.ambient.app
      .get(ApiKeysService, { strict: false })
      .create(user, 'member');
    member = apiClient(app.baseUrl, key);
  });

  it('creates, lists, updates and deletes a secret; the value is never returned and stored encrypted', async () => {
    const created = await api.post('/secrets', {
      name: 'CI_TOKEN',
      value: 'plain-text-value-123',
      description: 'CI',
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      name: 'CI_TOKEN',
      description: 'CI',
      scope: null,
      purpose: 'run',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const listed = await api.get('/secrets');
    expect(listed.body.secrets.map((s: { name: string }) => s.name)).toEqual(['CI_TOKEN']);
    expect(JSON.stringify(listed.body)).not.toContain('plain-text-value-123');
    const [row] = (await app.dataSource.query(
      `SELECT ciphertext FROM team_secrets WHERE name = 'CI_TOKEN'`,
    )) as { ciphertext: Buffer }[];
    expect(Buffer.from(row.ciphertext).includes(Buffer.from('plain-text-value'))).toBe(false);
    const updated = await api.put('/secrets/CI_TOKEN', { value: 'second-value-456' });
    expect(updated.status).toBe(200);
    expect(JSON.stringify(updated.body)).not.toContain('second-value');
    const [after] = (await app.dataSource.query(
      `SELECT ciphertext FROM team_secrets WHERE name = 'CI_TOKEN'`,
    )) as { ciphertext: Buffer }[];
    expect(Buffer.from(after.ciphertext).equals(Buffer.from(row.ciphertext))).toBe(false);
    expect((await api.delete('/secrets/CI_TOKEN')).status).toBe(204);
    expect((await api.get('/secrets')).body.secrets).toEqual([]);
    expect((await api.delete('/secrets/CI_TOKEN')).status).toBe(404);
  });

  it('refuses bad input naming the field, and duplicates with 409, changing nothing', async () => {
    expect((await api.post('/secrets', { name: '9-bad', value: 'x' })).body.detail).toMatch(
      /^name: must start with a letter/,
    );
    expect((await api.post('/secrets', { name: 'OK_NAME' })).body.detail).toMatch(/^value: /);
    expect(
      (await api.post('/secrets', { name: 'BIG', value: 'x'.repeat(128 * 1024 + 1) })).body.detail,
    ).toMatch(/^value: must be at most 131072 bytes/);
    await api.post('/secrets', { name: 'DUP', value: 'first' });
    const dup = await api.post('/secrets', { name: 'DUP', value: 'second' });
    expect(dup.status).toBe(409);
    // A null value is no value: 400 naming it (it was a 500 the fuzz found), the secret unchanged.
    const nulled = await api.put('/secrets/DUP', { value: null });
    expect(nulled.status).toBe(400);
    expect(nulled.body.detail).toMatch(/^value: /);
    expect((await api.get('/secrets')).body.secrets.map((s: { name: string }) => s.name)).toEqual([
      'DUP',
    ]);
  });

  it('lets a member read the names only; creating, changing and deleting are for admins', async () => {
    expect(
      (await member.get('/secrets')).body.secrets.map((s: { name: string }) => s.name),
    ).toEqual(['DUP']);
    const refusals = [
      await member.put('/secrets/DUP', { value: 'hijack' }),
      await member.delete('/secrets/DUP'),
      await member.post('/secrets', { name: 'MEMBER_OWN', value: 'mine' }),
    ];
    for (const res of refusals) {
      expect(res.status).toBe(403);
      expect(res.body.detail).toBe(
        'role "member" lacks permission "secrets.write" (held by: admin)',
      );
    }
    expect((await api.get('/secrets')).body.secrets.map((s: { name: string }) => s.name)).toEqual([
      'DUP',
    ]);
  });

  it('refuses to delete a secret a live webhook uses (409), and allows it once the webhook is gone', async () => {
    const factory = await createFactory(api, 'SecretsFactory');
    const hook = await createWebhook(api, factory, { name: 'uses-secret' });
    const refused = await api.delete(`/secrets/${hook.secret_name}`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('uses-secret');
    await api.delete(`/factory/${factory}/webhooks/${hook.uid}`);
    expect((await api.delete(`/secrets/${hook.secret_name}`)).status).toBe(204);
    expect(
      (await api.put(`/factory/${factory}/definition`, definitionFiles({}, 'SecretsFactory')))
        .status,
    ).toBe(200);
  });

  it('answers 503 naming AMBIENT_SECRETS_KEY when the server has no key', async () => {
    const keyless = await startTestApp(env, ['api'], { secretsKey: '' });
    try {
      const res = await apiClient(keyless.baseUrl, keyless.apiKey).post('/secrets', {
        name: 'NOPE',
        value: 'v',
      });
      expect(res.status).toBe(503);
      expect(res.body.detail).toContain('AMBIENT_SECRETS_KEY');
      expect((await apiClient(keyless.baseUrl, keyless.apiKey).get('/secrets')).status).toBe(200);
    } finally {
      await keyless.close();
    }
  });
});
