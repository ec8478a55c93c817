import { ApiKeysService, TeamsService } from '../src/modules/teams';
import { UserDirectoryService } from '../src/modules/teams/auth/user-directory.service';
import { apiClient } from './support/api-client';
import { CookieJar, signInThroughProvider } from './support/browser-cookies';
import { useOidcSignIn } from './support/oidc-provider';
import { isStream, openSse, SseStream } from './support/sse-stream';
import { useTestApp } from './support/use-test-app';

const PAT = { email: 'Pat@Example.test', name: 'Pat Admin', groups: ['ambient-admins'] };

/**
 * The identity provider deprovisions through SCIM 2.0 as Okta and Entra do: it finds the person
 * by userName, sets `active` to false, and at once nothing of theirs works any more (keys,
 * sessions, open streams); bad requests get SCIM errors and change nothing.
 */
describe('SCIM deprovisioning', () => {
  const oidc = useOidcSignIn({ pat: PAT });
  const { api, app } = useTestApp(
    'scim',
    ['api'],
    () => oidc.appSettings('ambient-admins=default:admin'),
    { model: false },
  );
  const origin = () => new URL(app.baseUrl).origin;
  let token: string;
  let tokenId: string;
  const scim = (path: string, init: RequestInit = {}, bearer = token) =>
    fetch(`${origin()}/api/v1/scim/v2${path}`, {
      ...init,
      headers: {
        Accept: 'application/scim+json',
        Authorization: `Bearer ${bearer}`,
        ...(init.body ? { 'Content-Type': 'application/scim+json' } : {}),
      },
    });
  const scimJson = async (res: Response) => (await res.json()) as Record<string, unknown>;
  const patchOp = (Operations: unknown[]) =>
    JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations });

  it('gives an admin a SCIM token, shown once, and lists it without the secret', async () => {
    const created = await api.post('/scim-tokens', { name: 'Okta' });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^scim_[A-Za-z0-9]{12}_[A-Za-z0-9]{32}$/);
    expect(created.body.scim_base_url).toMatch(/\/api\/v1\/scim\/v2$/);
    token = created.body.token as string;
    tokenId = created.body.id as string;
    const listed = await api.get('/scim-tokens');
    expect(listed.body.scim_tokens).toEqual([
      expect.objectContaining({ id: tokenId, name: 'Okta', revoked_at: null }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(token);
    const viewer = (await api.post('/api-keys', { name: 'v', role: 'viewer' })).body.key as string;
    const refused = await apiClient(app.baseUrl, viewer).post('/scim-tokens', { name: 'x' });
    expect(refused.status).toBe(403);
    const config = await scim('/ServiceProviderConfig');
    expect(config.status).toBe(200);
    expect(await scimJson(config)).toMatchObject({
      patch: { supported: true },
      filter: { supported: true, maxResults: 100 },
      bulk: { supported: false },
    });
    const blank = await api.post('/scim-tokens', { name: ' ' });
    expect(blank.status).toBe(400);
    expect(blank.body.detail).toMatch(/^name/);
  });

  describe('a person deactivated by the provider', () => {
    let jar: CookieJar;
    let key: string;
    let id: string;
    const streams: SseStream[] = [];
    afterAll(() => streams.forEach((s) => s.close()));

    beforeAll(async () => {
      const signIn = await signInThroughProvider(origin(), 'pat');
      expect(signIn.response.status).toBe(302);
      jar = signIn.jar;
      const created = await api
        .raw()
        .post('/api/v1/api-keys')
        .set({ cookie: jar.header, 'x-csrf-token': jar.cookies.get('ambient_csrf')! })
        .send({ name: 'laptop', role: 'admin' });
      expect(created.status).toBe(201);
      key = created.body.key as string;
      const run = await api.post('/agent/runs', { prompt: 'watched until deprovisioned' });
      const url = `${app.baseUrl}/agent/runs/${run.body.run_id}/stream`;
      for (const credential of [{ apiKey: key }, { cookie: jar.header }]) {
        const stream = await openSse(url, credential);
        if (!isStream(stream)) throw new Error(`stream refused: ${JSON.stringify(stream.body)}`);
        await stream.next((e) => e.event === 'run', 'the first run event');
        streams.push(stream);
      }
    });

    it('is found by userName, as a SCIM ListResponse in application/scim+json', async () => {
      const found = await scim(
        `/Users?filter=${encodeURIComponent('userName eq "pat@example.test"')}`,
      );
      expect(found.status).toBe(200);
      expect(found.headers.get('content-type')).toMatch(/^application\/scim\+json/);
      const body = await scimJson(found);
      expect(body).toMatchObject({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
        totalResults: 1,
        startIndex: 1,
        itemsPerPage: 1,
      });
      const [user] = body.Resources as Record<string, unknown>[];
      expect(user).toMatchObject({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: 'pat@example.test',
        displayName: 'Pat Admin',
        active: true,
        meta: { resourceType: 'User' },
      });
      id = user.id as string;
      const none = await scimJson(
        await scim(`/Users?filter=${encodeURIComponent('userName eq "nobody@example.test"')}`),
      );
      expect(none).toMatchObject({ totalResults: 0, Resources: [] });
    });

    it('refuses bad requests with SCIM errors, changing nothing', async () => {
      const cases: [Promise<Response>, number, string | undefined, RegExp][] = [
        [
          scim(`/Users?filter=${encodeURIComponent('emails co "x"')}`),
          400,
          'invalidFilter',
          /^filter/,
        ],
        [
          scim(`/Users/${id}`, {
            method: 'PATCH',
            body: patchOp([{ op: 'frob', path: 'active' }]),
          }),
          400,
          'invalidSyntax',
          /^Operations\[0\]\.op/,
        ],
        [
          scim(`/Users/${id}`, {
            method: 'PATCH',
            body: patchOp([{ op: 'replace', path: 'active', value: 'nope' }]),
          }),
          400,
          'invalidValue',
          /^Operations\[0\]\.value/,
        ],
        [scim('/Users/no-such-user'), 404, undefined, /not found/],
        [
          scim('/Users', {}, 'scim_aaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'),
          401,
          undefined,
          /SCIM token/,
        ],
        [scim('/Users', {}, key), 401, undefined, /SCIM token/],
      ];
      for (const [sent, status, scimType, detail] of cases) {
        const res = await sent;
        expect(res.status).toBe(status);
        expect(res.headers.get('content-type')).toMatch(/^application\/scim\+json/);
        const body = await scimJson(res);
        expect(body).toMatchObject({
          schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
          status: String(status),
        });
        expect(body.scimType).toBe(scimType);
        expect(body.detail).toMatch(detail);
      }
      expect((await scimJson(await scim(`/Users/${id}`))).active).toBe(true);
      expect((await apiClient(app.baseUrl, key).get('/agent/runs')).status).toBe(200);
    });

    it('loses keys, sessions and open streams at once when PATCHed inactive (as Entra sends it)', async () => {
      const res = await scim(`/Users/${id}`, {
        method: 'PATCH',
        body: patchOp([{ op: 'Replace', path: 'active', value: 'False' }]),
      });
      expect(res.status).toBe(200);
      expect((await scimJson(res)).active).toBe(false);

      expect((await apiClient(app.baseUrl, key).get('/agent/runs')).status).toBe(401);
      const me = await fetch(`${origin()}/api/v1/me`, { headers: { cookie: jar.header } });
      expect(me.status).toBe(401);
      for (const stream of streams) {
        const ended = await stream.next((e) => e.event === 'error', 'the deprovisioning error');
        expect(JSON.parse(ended.data).detail).toMatch(/its person removed/);
        await stream.ended;
      }
      const directory = app.ambient.app.get(UserDirectoryService);
      const asExtension = { team: 'default', email: 'pat@example.test', role: 'admin' as const };
      expect(await directory.principalOf(asExtension)).toBeNull();
      const again = await signInThroughProvider(origin(), 'pat');
      expect(again.response.status).toBe(403);
      expect(await again.response.text()).toContain('deactivated by your identity provider');
      const events = (await api.get('/audit-events')).body.events as Record<string, unknown>[];
      expect(events.find((e) => e.action === 'user.deactivate')).toMatchObject({
        actor: expect.objectContaining({ type: 'system', id: `scim:${tokenId}` }),
        details: { revoked_keys: 1, ended_sessions: 1 },
      });
    });

    it('signs in again once reactivated (as Okta sends it); the old key stays revoked', async () => {
      const res = await scim(`/Users/${id}`, {
        method: 'PATCH',
        body: patchOp([{ op: 'replace', value: { active: true } }]),
      });
      expect((await scimJson(res)).active).toBe(true);
      expect((await signInThroughProvider(origin(), 'pat')).response.status).toBe(302);
      expect((await apiClient(app.baseUrl, key).get('/agent/runs')).status).toBe(401);
      const directory = app.ambient.app.get(UserDirectoryService);
      const asExtension = { team: 'default', email: 'pat@example.test', role: 'member' as const };
      expect(await directory.principalOf(asExtension)).toMatchObject({ userId: id });
    });

    it('deactivates by PUT and by DELETE too', async () => {
      const put = await scim(`/Users/${id}`, {
        method: 'PUT',
        body: JSON.stringify({ userName: 'pat@example.test', active: false }),
      });
      expect(put.status).toBe(200);
      expect((await scimJson(put)).active).toBe(false);
      await scim(`/Users/${id}`, { method: 'PUT', body: JSON.stringify({ active: true }) });
      expect((await scim(`/Users/${id}`, { method: 'DELETE' })).status).toBe(204);
      expect((await scimJson(await scim(`/Users/${id}`))).active).toBe(false);
    });

    it("never shows or touches another team's people", async () => {
      const teams = app.ambient.app.get(TeamsService);
      const other = await teams.createTeam(`scim-other-${Date.now()}`);
      const admin = await teams.createUser(other, { displayName: 'Olga', role: 'admin' });
      const otherKey = (await app.ambient.app.get(ApiKeysService).create(admin, 't')).key;
      const otherToken = (
        await apiClient(app.baseUrl, otherKey).post('/scim-tokens', { name: 'B' })
      ).body.token as string;
      expect((await scim(`/Users/${id}`, {}, otherToken)).status).toBe(404);
      const patch = await scim(
        `/Users/${id}`,
        { method: 'PATCH', body: patchOp([{ op: 'replace', path: 'active', value: true }]) },
        otherToken,
      );
      expect(patch.status).toBe(404);
      expect((await scimJson(await scim(`/Users/${id}`))).active).toBe(false);
    });

    it('refuses a revoked token on the next request', async () => {
      expect((await api.delete(`/scim-tokens/${tokenId}`)).status).toBe(204);
      expect((await scim('/Users')).status).toBe(401);
    });
  });
});
