import { newUid } from '../src/common/ids';
import { CookieJar, signInThroughProvider } from './support/browser-cookies';
import { TestAccount, useOidcSignIn } from './support/oidc-provider';
import { apiClient } from './support/api-client';
import { isStream, openSse } from './support/sse-stream';
import { useTestApp } from './support/use-test-app';

const admin = (login: string): TestAccount => ({
  email: `${login}@example.test`,
  name: login,
  groups: ['ambient-admins'],
});
const ACCOUNTS: Record<string, TestAccount> = {
  ada: admin('ada'),
  mo: admin('mo'),
  rex: admin('rex'),
  sam: { email: 'sam@example.test', name: 'sam', groups: ['ambient-members'] },
  ivy: { email: 'ivy@example.test', name: 'ivy', groups: ['ambient-members'] },
};

/**
 * Keys and sessions follow their person as the identity provider has them now: a demoted
 * person's admin key acts with their new role, a person moved to another team or no longer mapped
 * loses their keys and sessions, and signing out ends the streams the session opened.
 */
describe('keys and sessions follow their person', () => {
  const oidc = useOidcSignIn(ACCOUNTS);
  const { api, app } = useTestApp(
    'key-lifecycle',
    ['api'],
    () =>
      oidc.appSettings(
        'ambient-admins=default:admin,ambient-members=default:member,ambient-viewers=default:viewer,ambient-other=other:admin',
      ),
    { model: false },
  );
  const origin = () => new URL(app.baseUrl).origin;

  async function signedIn(login: string): Promise<{ jar: CookieJar; csrf: string }> {
    const { response, jar } = await signInThroughProvider(origin(), login);
    expect(response.status).toBe(302);
    return { jar, csrf: jar.cookies.get('ambient_csrf')! };
  }
  const me = (jar: CookieJar) =>
    fetch(`${origin()}/api/v1/me`, { headers: { cookie: jar.header } });
  /** A key the signed-in person makes for themselves in the console, with its own role. */
  async function keyOf(session: { jar: CookieJar; csrf: string }, role: string): Promise<string> {
    const created = await api
      .raw()
      .post('/api/v1/api-keys')
      .set({ cookie: session.jar.header, 'x-csrf-token': session.csrf })
      .send({ name: `${role} key`, role });
    expect(created.status).toBe(201);
    return created.body.key as string;
  }
  const moveTo = (login: string, groups: string[]) =>
    oidc.provider.setAccount(login, { ...ACCOUNTS[login], groups });

  it("acts with no more than its person's current role once the provider demotes them", async () => {
    const key = await keyOf(await signedIn('ada'), 'admin');
    const asKey = apiClient(app.baseUrl, key);
    expect((await asKey.get('/api-keys')).status).toBe(200);

    await moveTo('ada', ['ambient-viewers']);
    await signedIn('ada');
    const refused = await asKey.get('/api-keys');
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe(
      'role "viewer" lacks permission "api_keys.read" (held by: admin)',
    );
    expect((await asKey.post('/agent/runs', { prompt: 'as admin' })).status).toBe(403);
    expect((await asKey.get('/agent/runs')).status).toBe(200);
  });

  it('stops authenticating the keys and sessions of a person moved to another team', async () => {
    await app.dataSource.query(`INSERT INTO teams (id, name, created_at) VALUES (?, ?, NOW(3))`, [
      newUid(),
      'other',
    ]);
    const before = await signedIn('mo');
    const key = await keyOf(before, 'admin');
    expect((await apiClient(app.baseUrl, key).get('/agent/runs')).status).toBe(200);

    await moveTo('mo', ['ambient-other']);
    const after = await signedIn('mo');
    expect((await apiClient(app.baseUrl, key).get('/agent/runs')).status).toBe(401);
    expect((await me(before.jar)).status).toBe(401);
    const now = (await (await me(after.jar)).json()) as Record<string, string>;
    expect(now).toMatchObject({ team_name: 'other', role: 'admin' });

    // Moved back, the old key stays revoked.
    await moveTo('mo', ['ambient-admins']);
    await signedIn('mo');
    expect((await apiClient(app.baseUrl, key).get('/agent/runs')).status).toBe(401);
  });

  it('revokes the keys and sessions of a person the provider no longer maps, at sign-in', async () => {
    const session = await signedIn('rex');
    const key = await keyOf(session, 'admin');
    expect((await me(session.jar)).status).toBe(200);

    await moveTo('rex', ['staff']);
    const refused = await signInThroughProvider(origin(), 'rex');
    expect(refused.response.status).toBe(403);
    expect((await apiClient(app.baseUrl, key).get('/agent/runs')).status).toBe(401);
    expect((await me(session.jar)).status).toBe(401);
    const [user] = (await app.dataSource.query(`SELECT id FROM users WHERE email = ?`, [
      'rex@example.test',
    ])) as { id: string }[];
    const events = (await app.dataSource.query(
      `SELECT actor_type, details FROM audit_events WHERE action = 'user.access_revoked' AND target_id = ?`,
      [user.id],
    )) as { actor_type: string; details: Record<string, unknown> }[];
    expect(events).toEqual([
      {
        actor_type: 'system',
        details: expect.objectContaining({ revoked_keys: 1, ended_sessions: 1 }),
      },
    ]);
  });

  it("keeps a session's Idempotency-Key answers to that session, not the person's other sessions", async () => {
    const [first, second] = [await signedIn('ivy'), await signedIn('ivy')];
    const create = (session: { jar: CookieJar; csrf: string }) =>
      api
        .raw()
        .post('/api/v1/agent/runs')
        .set({
          cookie: session.jar.header,
          'x-csrf-token': session.csrf,
          'Idempotency-Key': 'op-1',
        })
        .send({ prompt: 'one operation per session' });
    const mine = await create(first);
    expect(mine.status).toBe(200);
    const replayed = await create(first);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body.run_id).toBe(mine.body.run_id);
    const theirs = await create(second);
    expect(theirs.status).toBe(200);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.run_id).not.toBe(mine.body.run_id);
  });

  it('ends the run streams a session opened when it signs out', async () => {
    const session = await signedIn('sam');
    const run = await api.post('/agent/runs', { prompt: 'watched by a browser' });
    expect(run.status).toBe(200);
    const stream = await openSse(`${app.baseUrl}/agent/runs/${run.body.run_id}/stream`, {
      cookie: session.jar.header,
    });
    if (!isStream(stream)) throw new Error(`stream refused: ${JSON.stringify(stream.body)}`);
    try {
      await stream.next((e) => e.event === 'run', 'the first run event');
      const out = await fetch(`${origin()}/api/v1/auth/logout`, {
        method: 'POST',
        headers: { cookie: session.jar.header, 'x-csrf-token': session.csrf },
      });
      expect(out.status).toBe(204);
      const ended = await stream.next((e) => e.event === 'error', 'the sign-out error');
      expect(JSON.parse(ended.data).detail).toMatch(/session signed out/);
      await stream.ended;
    } finally {
      stream.close();
    }
  });
});
