import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { createFactory, definitionFiles, deliver } from './support/webhook-helpers';

/** Managed factories: definitions written through the API, validated whole, applied atomically. */
describe('managed factories and their definitions', () => {
  let member: ReturnType<typeof apiClient>;

  const { app, api } = useTestApp('factories', ['api', 'ingress'], {}, { model: false });

  beforeAll(async () => {
    const teams = app.ambient.app.get(TeamsService, { strict: false });
    const user = await teams.createUser((await teams.findByName('default'))!, {
      displayName: 'M',
      role: 'member',
    });
    member = apiClient(
      app.baseUrl,
      (await app.ambient.app.get(ApiKeysService, { strict: false }).create(user, 'm')).key,
    );
    await api.post('/secrets', { name: 'CI_SECRET', value: 'ci-token-value-0123456789' });
    await api.post('/secrets', { name: 'NOT_URL_SAFE', value: 'has spaces and / slashes!!' });
  });

  const webhooksOf = async (factory: string) =>
    (
      (await api.get(`/factory/${factory}/webhooks`)).body.webhooks as {
        uid: string;
        name: string;
      }[]
    ).map((w) => w.name);

  it('creates a managed factory with the Oz Factory shape, lists and finds it', async () => {
    const created = await api.post('/factory', {
      name: 'Platform',
      description: 'Ops automations',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      uid: expect.stringMatching(/^[A-Za-z0-9]{22}$/),
      name: 'Platform',
      description: 'Ops automations',
      code_forge: 'NONE',
      credential_strategy: 'EXECUTOR',
      agent_defaults: { default_runner_uid: '', mcp_servers: {}, secrets: [], worker_host: '' },
      definition_source: { kind: 'managed', applied_commit: null },
    });
    const uid = created.body.uid;
    expect((await api.get(`/factory/${uid}`)).body.name).toBe('Platform');
    const definition = await api.get(`/factory/${uid}/definition`);
    expect(definition.body.files).toEqual([
      {
        path: 'factory.yaml',
        content: 'schemaVersion: v1alpha1\nname: "Platform"\ndescription: "Ops automations"\n',
      },
    ]);
    await createFactory(api, 'Second');
    const page = await api.get('/factory?limit=1');
    expect(page.body.factories).toHaveLength(1);
    expect(page.body.page_info.has_next_page).toBe(true);
    const next = await api.get(`/factory?limit=1&cursor=${page.body.page_info.next_cursor}`);
    expect(next.body.factories[0].uid).not.toBe(page.body.factories[0].uid);
    expect(
      (await api.get('/factory?search=Platf')).body.factories.map((f: { name: string }) => f.name),
    ).toEqual(['Platform']);
    expect((await api.post('/factory', {})).body.detail).toMatch(/^name: is required/);
    expect((await api.get('/factory/AAAAAAAAAAAAAAAAAAAAAA')).status).toBe(404);
  });

  it('reports every problem with file, line and reason, and changes nothing', async () => {
    const factory = await createFactory(api, 'Strict');
    const before = (await api.get(`/factory/${factory}/definition`)).body;
    // File problems (a YAML syntax error, a wrong value) and state problems (a missing secret, a
    // secret unfit for its mode) in other files come back from the same apply.
    const res = await api.put(
      `/factory/${factory}/definition`,
      definitionFiles(
        {
          'webhooks/good.yaml': 'secretName: CI_SECRET\n',
          'webhooks/bad.yaml': 'secretName: CI_SECRET\nauthMode: basic\n',
          'webhooks/broken.yaml': 'authMode: token\nsecretName: [CI_SECRET\n',
          'webhooks/nosecret.yaml': 'authMode: token\nsecretName: MISSING_SECRET\n',
          'webhooks/url.yaml': 'authMode: url_token\nsecretName: NOT_URL_SAFE\n',
        },
        'Strict',
      ),
    );
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.body.detail).toMatch(
      /nothing was changed: webhooks\/bad.yaml:2:11: "authMode" must be one of token, url_token, signature/,
    );
    expect(res.body.diagnostics).toEqual([
      {
        code: 'invalid_value',
        path: 'webhooks/bad.yaml',
        line: 2,
        column: 11,
        message: expect.stringContaining('authMode'),
      },
      expect.objectContaining({
        code: 'yaml_syntax',
        path: 'webhooks/broken.yaml',
        line: 3,
        message: expect.stringMatching(/^YAML: .*end with a \]/),
      }),
      expect.objectContaining({
        code: 'invalid_secret',
        path: 'webhooks/nosecret.yaml',
        line: 2,
        message: expect.stringMatching(/team secret "MISSING_SECRET" does not exist/),
      }),
      expect.objectContaining({
        code: 'invalid_secret',
        path: 'webhooks/url.yaml',
        line: 2,
        message: expect.stringMatching(/A-Za-z0-9/),
      }),
    ]);
    expect(await webhooksOf(factory)).toEqual([]);
    expect((await api.get(`/factory/${factory}/definition`)).body).toEqual(before);
  });

  it('assigns UIDs when webhook files first apply; automations take UIDs, not file names; renames are refused', async () => {
    const factory = await createFactory(api, 'Uids');
    const applied = await api.put(
      `/factory/${factory}/definition`,
      definitionFiles({ 'webhooks/ci.yaml': 'secretName: CI_SECRET\n' }, 'Uids'),
    );
    expect(applied.status).toBe(200);
    const [ci] = (await api.get(`/factory/${factory}/webhooks`)).body.webhooks;
    expect(ci).toMatchObject({
      name: 'ci',
      auth_mode: 'token',
      secret_name: 'CI_SECRET',
      enabled: true,
    });
    const trigger = (ids: string) =>
      `---\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [${ids}]\n---\nDo it.\n`;
    const byName = await api.put(
      `/factory/${factory}/definition`,
      definitionFiles(
        {
          'webhooks/ci.yaml': 'secretName: CI_SECRET\n',
          'automations/a/automation.md': trigger('ci'),
        },
        'Uids',
      ),
    );
    expect(byName.body.diagnostics[0]).toMatchObject({
      path: 'automations/a/automation.md',
      line: 6,
      message: expect.stringMatching(/not file names/),
    });
    const foreign = await api.put(
      `/factory/${factory}/definition`,
      definitionFiles(
        {
          'webhooks/ci.yaml': 'secretName: CI_SECRET\n',
          'automations/a/automation.md': trigger('ZZZZZZZZZZZZZZZZZZZZZZ'),
        },
        'Uids',
      ),
    );
    expect(foreign.body.diagnostics[0].message).toMatch(
      /no webhook with UID "ZZZZZZZZZZZZZZZZZZZZZZ" in this factory/,
    );
    const ok = await api.put(
      `/factory/${factory}/definition`,
      definitionFiles(
        {
          'webhooks/ci.yaml': 'secretName: CI_SECRET\nenabled: true\n',
          'automations/a/automation.md': trigger(ci.uid),
        },
        'Uids',
      ),
    );
    expect(ok.status).toBe(200);
    expect((await api.get(`/factory/${factory}/webhooks`)).body.webhooks[0].uid).toBe(ci.uid); // same file, same UID
    const renamed = await api.put(
      `/factory/${factory}/definition`,
      definitionFiles({ 'webhooks/ci-renamed.yaml': 'secretName: CI_SECRET\n' }, 'Uids'),
    );
    expect(renamed.status).toBe(400);
    expect(renamed.body.diagnostics[0]).toMatchObject({
      code: 'rename_not_supported',
      path: 'webhooks/ci-renamed.yaml',
    });
    const twentyOne = Object.fromEntries(
      Array.from({ length: 21 }, (_, i) => [`webhooks/w${i}.yaml`, 'secretName: CI_SECRET\n']),
    );
    expect(
      (
        await api.put(
          `/factory/${factory}/definition`,
          definitionFiles({ 'webhooks/ci.yaml': 'secretName: CI_SECRET\n', ...twentyOne }, 'Uids'),
        )
      ).body.diagnostics[0].message,
    ).toMatch(/at most 20 webhooks/);
    expect(await webhooksOf(factory)).toEqual(['ci']);
  });

  it('picks up a new secret value at the next apply, not before', async () => {
    await api.post('/secrets', { name: 'ROTATING', value: 'first-value-0123456789' });
    const factory = await createFactory(api, 'Rotating');
    const files = definitionFiles({ 'webhooks/r.yaml': 'secretName: ROTATING\n' }, 'Rotating');
    await api.put(`/factory/${factory}/definition`, files);
    const [hook] = (await api.get(`/factory/${factory}/webhooks`)).body.webhooks;
    const url = `${app.ingressUrl}/webhooks/w/${hook.uid}`;
    await api.put('/secrets/ROTATING', { value: 'second-value-0123456789' });
    expect(
      (await deliver(url, '{"a":1}', { Authorization: 'Bearer second-value-0123456789' })).status,
    ).toBe(401);
    expect(
      (await deliver(url, '{"a":2}', { Authorization: 'Bearer first-value-0123456789' })).status,
    ).toBe(202);
    await api.put(`/factory/${factory}/definition`, files);
    expect(
      (await deliver(url, '{"a":3}', { Authorization: 'Bearer first-value-0123456789' })).status,
    ).toBe(401);
    expect(
      (await deliver(url, '{"a":4}', { Authorization: 'Bearer second-value-0123456789' })).status,
    ).toBe(202);
  });

  it('lets team members read factories and webhooks; only admins manage them', async () => {
    const factory = await createFactory(api, 'Admins');
    expect((await member.get(`/factory/${factory}`)).status).toBe(200);
    expect((await member.get(`/factory/${factory}/webhooks`)).status).toBe(200);
    const refused = [
      [await member.put(`/factory/${factory}/definition`, definitionFiles({}, 'X')), 'factories'],
      [await member.post(`/factory/${factory}/webhooks`, { name: 'm' }), 'webhooks'],
      [await member.delete(`/factory/${factory}`), 'factories'],
      [await member.post('/factory', { name: 'Mine' }), 'factories'],
    ] as const;
    for (const [res, resource] of refused) {
      expect(res.status).toBe(403);
      expect(res.body.detail).toBe(
        `role "member" lacks permission "${resource}.write" (held by: admin)`,
      );
    }
  });

  it('deletes a factory: its webhooks answer 404', async () => {
    const factory = await createFactory(api, 'Doomed');
    const hook = (await api.post(`/factory/${factory}/webhooks`, { name: 'doomed' })).body;
    const url = `${app.ingressUrl}/webhooks/w/${hook.uid}`;
    expect((await deliver(url, '{}', { Authorization: `Bearer ${hook.secret}` })).status).toBe(202);
    expect((await api.delete(`/factory/${factory}`)).status).toBe(204);
    expect((await deliver(url, '{}', { Authorization: `Bearer ${hook.secret}` })).status).toBe(404);
    expect((await api.get(`/factory/${factory}`)).status).toBe(404);
  });

  it('documents factories, webhooks, deliveries and secrets in the OpenAPI document', async () => {
    const doc = (await api.raw().get('/api/v1/openapi.json')).body;
    for (const path of [
      '/secrets',
      '/secrets/{name}',
      '/factory',
      '/factory/{uid}',
      '/factory/{uid}/definition',
      '/factory/{factoryUid}/webhooks',
      '/factory/{factoryUid}/webhooks/{uid}/rotate-secret',
      '/factory/{factoryUid}/webhooks/{uid}/deliveries',
      '/factory/{factoryUid}/webhooks/{uid}/deliveries/{id}/test-filter',
      '/factory-files/validate',
    ]) {
      expect(doc.paths[path]).toBeDefined();
    }
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'Factory',
        'Webhook',
        'WebhookWithSecret',
        'WebhookDelivery',
        'TeamSecret',
      ]),
    );
  });

  it('validates files without authentication or stored state (POST /factory-files/validate)', async () => {
    const res = await api
      .raw()
      .post('/api/v1/factory-files/validate')
      .send(definitionFiles({ 'webhooks/a.yaml': 'authMode: signature\nsecretName: S\n' }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      valid: false,
      schema_version: 'v1alpha1',
      diagnostics: [
        { path: 'webhooks/a.yaml', line: 1, message: expect.stringMatching(/signatureScheme/) },
      ],
      validation_scope: {
        parser: 'checked',
        state_independent: 'checked',
        state_dependent: 'not_checked',
      },
    });
    expect(
      (await api.raw().post('/api/v1/factory-files/validate').send(definitionFiles({}))).body.valid,
    ).toBe(true);
  });
});
