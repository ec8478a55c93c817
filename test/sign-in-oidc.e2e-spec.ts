import { CookieJar, signInThroughProvider } from './support/browser-cookies';
import { TestAccount, useOidcSignIn } from './support/oidc-provider';
import { useTestApp } from './support/use-test-app';

const ACCOUNTS: Record<string, TestAccount> = {
  mia: { email: 'Mia@Example.test', name: 'Mia Member', groups: ['staff', 'ambient-members'] },
  vic: { email: 'vic@example.test', name: 'Vic Viewer', groups: ['ambient-viewers'] },
  nob: { email: 'nob@example.test', name: 'Nobody', groups: ['staff'] },
  gus: { email: 'gus@example.test', name: 'Ghost', groups: ['ambient-ghost'] },
};

/**
 * Console single sign-on against a real OpenID provider (oidc-provider on loopback): users are
 * created and their roles refreshed from the groups claim, sessions authenticate API calls with a
 * CSRF token on changes, and whatever does not check out (state, unmapped groups) is refused.
 */
describe('console sign-in over OpenID Connect', () => {
  const oidc = useOidcSignIn(ACCOUNTS);
  const { api, app } = useTestApp(
    'sign-in-oidc',
    ['api'],
    () =>
      oidc.appSettings(
        'ambient-admins=default:admin,ambient-members=default:member,ambient-viewers=default:viewer,ambient-ghost=ghost:admin',
        { 'signIn.sessionTtlHours': 2 },
      ),
    { model: false },
  );
  const origin = () => new URL(app.baseUrl).origin;
  const users = (subject: string) =>
    app.dataSource.query(
      `SELECT id, team_id, role, email, display_name, last_sign_in_at FROM users WHERE oidc_issuer = ? AND oidc_subject = ?`,
      [oidc.provider.issuer, subject],
    ) as Promise<{ id: string; role: string; email: string; display_name: string }[]>;
  const countRuns = async () =>
    Number((await app.dataSource.query(`SELECT COUNT(*) AS n FROM runs`))[0].n);
  const auditOf = (action: string) =>
    app.dataSource.query(
      `SELECT actor_type, actor_id, actor_role, outcome, details FROM audit_events WHERE action = ? ORDER BY occurred_at`,
      [action],
    ) as Promise<
      {
        actor_type: string;
        actor_id: string;
        actor_role: string;
        outcome: string;
        details: Record<string, unknown>;
      }[]
    >;

  async function signedIn(login: string): Promise<CookieJar> {
    const { response, jar } = await signInThroughProvider(origin(), login);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/console/runs');
    return jar;
  }
  const asSession = (jar: CookieJar, csrf?: string) => ({
    cookie: jar.header,
    ...(csrf !== undefined ? { 'x-csrf-token': csrf } : {}),
  });

  it('tells the console that SSO is on', async () => {
    const res = await api.raw().get('/api/v1/auth/oidc/config');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ enabled: true, login_url: '/api/v1/auth/oidc/login' });
  });

  it('signs a mapped user in: a session cookie (HttpOnly, Lax, bounded), the user created once, GET /me', async () => {
    const { response, jar } = await signInThroughProvider(origin(), 'mia');
    expect(response.status).toBe(302);
    const setCookies = response.headers.getSetCookie();
    const session = setCookies.find((c) => c.startsWith('ambient_session='))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Lax/);
    expect(session).not.toMatch(/Secure/); // the public URL is http
    expect(Number(/Max-Age=(\d+)/.exec(session)![1])).toBeGreaterThan(7000);
    expect(Number(/Max-Age=(\d+)/.exec(session)![1])).toBeLessThanOrEqual(7200);
    const csrfCookie = setCookies.find((c) => c.startsWith('ambient_csrf='))!;
    expect(csrfCookie).not.toMatch(/HttpOnly/);

    const me = await fetch(`${origin()}/api/v1/me`, { headers: asSession(jar) });
    expect(me.status).toBe(200);
    const body = (await me.json()) as Record<string, string>;
    expect(body).toMatchObject({
      type: 'user',
      display_name: 'Mia Member',
      email: 'mia@example.test',
      team_name: 'default',
      role: 'member',
      signed_in_with: 'session',
    });
    expect(body.csrf_token).toBe(jar.cookies.get('ambient_csrf'));

    const rows = await users('mia');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ role: 'member', email: 'mia@example.test' });
    const signIns = (await auditOf('user.sign_in')).filter((e) => e.actor_id === rows[0].id);
    expect(signIns).toEqual([
      expect.objectContaining({ actor_type: 'user', actor_role: 'member', outcome: 'success' }),
    ]);
  });

  it('refuses a state-changing call by session without the CSRF token (403, nothing made); with it, it works as the user', async () => {
    const jar = await signedIn('mia');
    const csrf = jar.cookies.get('ambient_csrf')!;
    const before = await countRuns();
    for (const token of [undefined, 'forged-token']) {
      const refused = await api
        .raw()
        .post('/api/v1/agent/runs')
        .set(asSession(jar, token))
        .send({ prompt: 'csrf' });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/CSRF token as "x-csrf-token"/);
    }
    expect(await countRuns()).toBe(before);
    // Reads need no token.
    expect((await api.raw().get('/api/v1/agent/runs').set(asSession(jar))).status).toBe(200);

    const made = await api
      .raw()
      .post('/api/v1/agent/runs')
      .set(asSession(jar, csrf))
      .send({ prompt: 'by the signed-in member' });
    expect(made.status).toBe(200);
    expect(await countRuns()).toBe(before + 1);
    const [mia] = await users('mia');
    const created = (await auditOf('run.create')).at(-1)!;
    expect(created).toMatchObject({ actor_type: 'user', actor_id: mia.id, actor_role: 'member' });

    // A bearer key needs no CSRF token, even beside a session cookie.
    const keyed = await api.post('/agent/runs', { prompt: 'by key' }).set({ cookie: jar.header });
    expect(keyed.status).toBe(200);
  });

  it('gives a viewer read access only: starting a run is refused with 403', async () => {
    const jar = await signedIn('vic');
    const csrf = jar.cookies.get('ambient_csrf')!;
    expect((await api.raw().get('/api/v1/agent/runs').set(asSession(jar))).status).toBe(200);
    const refused = await api
      .raw()
      .post('/api/v1/agent/runs')
      .set(asSession(jar, csrf))
      .send({ prompt: 'no' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/role "viewer" lacks permission "runs.create"/);
  });

  it('refuses a callback whose state is not the one this browser started, or is replayed', async () => {
    const jar = new CookieJar();
    const login = await jar.fetch(`${origin()}/api/v1/auth/oidc/login`);
    expect(login.status).toBe(302);
    const authorize = new URL(login.headers.get('location')!);
    expect(authorize.origin).toBe(oidc.provider.issuer);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    const state = authorize.searchParams.get('state')!;

    const forged = await jar.fetch(
      `${origin()}/api/v1/auth/oidc/callback?code=stolen&state=${state}x`,
    );
    expect(forged.status).toBe(400);
    expect(await forged.text()).toMatch(/not started from this browser/);
    expect(forged.headers.getSetCookie().some((c) => c.startsWith('ambient_session='))).toBe(false);

    // A real code for a browser that did not start the sign-in (no state cookie) is refused too.
    const other = await signInSteps('mia');
    const withoutCookie = await fetch(other.callbackUrl, { redirect: 'manual' });
    expect(withoutCookie.status).toBe(400);
    // The browser that started it signs in; the same callback replayed is refused: used up.
    const stateCookie = `ambient_oidc_state=${other.jar.cookies.get('ambient_oidc_state')}`;
    expect((await other.jar.fetch(other.callbackUrl)).status).toBe(302);
    const replayed = await fetch(other.callbackUrl, {
      redirect: 'manual',
      headers: { cookie: stateCookie },
    });
    expect(replayed.status).toBe(400);
    expect(await replayed.text()).toMatch(/expired or was already used/);
  });

  /** Walks a sign-in up to the provider's redirect back, without calling Ambient's callback. */
  async function signInSteps(login: string): Promise<{ callbackUrl: string; jar: CookieJar }> {
    const jar = new CookieJar();
    const callbackPrefix = `${origin()}/api/v1/auth/oidc/callback`;
    let url = `${origin()}/api/v1/auth/oidc/login`;
    let init: RequestInit = {};
    for (let hop = 0; hop < 20; hop += 1) {
      if (url.startsWith(callbackPrefix)) return { callbackUrl: url, jar };
      const response = await jar.fetch(url, init);
      init = {};
      const location = response.headers.get('location');
      if (location) {
        url = new URL(location, url).href;
        continue;
      }
      const action = /<form method="post" action="([^"]+)"/.exec(await response.text())![1];
      url = new URL(action, url).href;
      init = {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ login }).toString(),
      };
    }
    throw new Error('no callback');
  }

  it('refuses a user whose groups map to nothing: a clear page, no user, no session, a denied event', async () => {
    const before = (await auditOf('user.sign_in')).length;
    const { response } = await signInThroughProvider(origin(), 'nob');
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    const page = await response.text();
    expect(page).toMatch(/Sign-in refused/);
    expect(page).toMatch(
      /nob@example\.test.*nothing in your &quot;groups&quot; claim gives access/,
    );
    expect(response.headers.getSetCookie().some((c) => c.startsWith('ambient_session='))).toBe(
      false,
    );
    expect(await users('nob')).toEqual([]);
    const denied = (await auditOf('user.sign_in')).slice(before);
    expect(denied).toEqual([
      expect.objectContaining({ actor_type: 'user', actor_id: 'nob', outcome: 'denied' }),
    ]);
    expect(denied[0].details).toMatchObject({ subject: 'nob', claim: ['staff'] });

    // Mapped to a team Ambient does not have: refused the same way, naming the team.
    const ghost = await signInThroughProvider(origin(), 'gus');
    expect(ghost.response.status).toBe(403);
    expect(await ghost.response.text()).toMatch(/team &quot;ghost&quot;, which does not exist/);
    expect(await users('gus')).toEqual([]);
  });

  it('keeps one user per subject and refreshes its role from the claims at each sign-in', async () => {
    await oidc.provider.setAccount('vic', { ...ACCOUNTS.vic, groups: ['ambient-admins'] });
    const jar = await signedIn('vic');
    const rows = await users('vic');
    expect(rows).toHaveLength(1);
    expect(rows[0].role).toBe('admin');
    const me = (await (
      await fetch(`${origin()}/api/v1/me`, { headers: asSession(jar) })
    ).json()) as { role: string };
    expect(me.role).toBe('admin');
    // The role is the user's: an earlier session of the same user acts with it too.
    expect((await api.raw().get('/api/v1/api-keys').set(asSession(jar))).status).toBe(200);
  });

  it('signs out: the session row is gone and the old cookie is refused (401); without CSRF it is not signed out', async () => {
    const jar = await signedIn('mia');
    const csrf = jar.cookies.get('ambient_csrf')!;
    const cookie = jar.header;
    const refused = await api.raw().post('/api/v1/auth/logout').set({ cookie });
    expect(refused.status).toBe(403);
    expect((await api.raw().get('/api/v1/me').set({ cookie })).status).toBe(200);

    const out = await api.raw().post('/api/v1/auth/logout').set({ cookie, 'x-csrf-token': csrf });
    expect(out.status).toBe(204);
    expect(out.headers['set-cookie']).toEqual(
      expect.arrayContaining([expect.stringMatching(/^ambient_session=;/)]),
    );
    const after = await api.raw().get('/api/v1/me').set({ cookie });
    expect(after.status).toBe(401);
    expect(after.body.error).toBeDefined();
    const [mia] = await users('mia');
    const signOuts = (await auditOf('user.sign_out')).filter((e) => e.actor_id === mia.id);
    expect(signOuts).toEqual([expect.objectContaining({ actor_type: 'user', outcome: 'success' })]);
  });
});
