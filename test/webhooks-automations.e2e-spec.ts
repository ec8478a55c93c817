import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeliveryEvaluationQueue } from '../src/modules/webhooks/delivery-evaluation.queue';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';
import { createFactory, createWebhook, deliver } from './support/webhook-helpers';

const FAST_SWEEP = { 'webhooks.sweepIntervalMs': 200, 'webhooks.sweepGraceMs': 300 };

/** Accepted deliveries start runs through automations: filters, envelope, attachment, sweeper. */
describe('webhook automations (api + ingress + worker)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let factory: string;
  let hook: { uid: string; local: string; auth: Record<string, string> };

  const automation = (name: string, filter: string, prompt = 'Handle the deployment event.') => ({
    path: `automations/${name}/automation.md`,
    content: `---\nmodel: fake-model\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [${hook.uid}]\n${filter}---\n${prompt}\n`,
  });

  async function setAutomations(...files: { path: string; content: string }[]) {
    const current = (await api.get(`/factory/${factory}/definition`)).body.files as {
      path: string;
    }[];
    const kept = current.filter((f) => !f.path.startsWith('automations/'));
    const res = await api.put(`/factory/${factory}/definition`, { files: [...kept, ...files] });
    expect(res.status).toBe(200);
  }

  async function startApp(roles: ('api' | 'ingress' | 'worker')[]) {
    await app?.close();
    app = await startTestApp(env, roles, FAST_SWEEP);
    api = apiClient(app.baseUrl, app.apiKey);
    if (hook) hook.local = `${app.ingressUrl}/webhooks/w/${hook.uid}`;
  }

  const entryFor = (deliveryId: string) =>
    waitFor(
      async () =>
        (
          (await api.get(`/factory/${factory}/webhooks/${hook.uid}/deliveries`)).body
            .deliveries as {
            id: string;
            delivery_id: string;
            status: string;
            evaluated_at: string | null;
            runs: { automation: string; run_id: string | null; error: string | null }[];
          }[]
        ).find((d) => d.delivery_id === deliveryId && d.status === 'Accepted'),
      (entry) => !!entry?.evaluated_at,
      { what: `delivery ${deliveryId} to be evaluated` },
    );

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('wh_automations', model.url);
    await startApp(['api', 'ingress', 'worker']);
    factory = await createFactory(api);
    const created = await createWebhook(api, factory, { name: 'deploys' });
    hook = {
      uid: created.uid,
      local: `${app.ingressUrl}/webhooks/w/${created.uid}`,
      auth: { Authorization: `Bearer ${created.secret}` },
    };
    await setAutomations(
      automation(
        'triage',
        '      payload:\n        event: [deploy.finished]\n        env: {not_in: [dev, staging]}\n        service: {exists: true}\n',
      ),
    );
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  it('starts one CUSTOM_WEBHOOK run with the prompt, the envelope and the exact body attached', async () => {
    const body =
      '{ "event": "deploy.finished",\n  "env": "prod", "service": "api", "note": "héllo ✓" }';
    const res = await deliver(hook.local, body, {
      ...hook.auth,
      'X-Ambient-Delivery-Id': 'dep-100',
    });
    expect(res.status).toBe(202);
    const entry = await entryFor('dep-100');
    expect(entry!.runs).toEqual([
      { automation: 'triage', run_id: expect.any(String), error_code: null, error: null },
    ]);
    const runId = entry!.runs[0].run_id!;
    const run = await waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (r) => r.state === 'SUCCEEDED',
      { what: 'the run to finish' },
    );
    expect(run.source).toBe('CUSTOM_WEBHOOK');
    const audit = await api.get(`/audit-events?action=run.create&target_id=${runId}`);
    expect(audit.body.events).toEqual([
      expect.objectContaining({
        actor: expect.objectContaining({
          type: 'system',
          id: expect.stringMatching(/^automation:/),
          name: 'automation "triage" (webhook "deploys", delivery dep-100)',
        }),
        details: expect.objectContaining({ source: 'CUSTOM_WEBHOOK' }),
      }),
    ]);
    expect(run.prompt.startsWith('Handle the deployment event.')).toBe(true);
    expect(run.prompt).toContain(`custom webhook "deploys" (UID ${hook.uid})`);
    expect(run.prompt).toContain('Delivery ID: dep-100');
    expect(run.prompt).toMatch(/event-payload\.json: it is the request to act on/);
    expect(run.prompt).toMatch(/untrusted/);
    const [stored] = (await app.dataSource.query(
      `SELECT file_name, mime_type, data FROM run_attachments WHERE run_id = ?`,
      [runId],
    )) as { file_name: string; mime_type: string; data: Buffer }[];
    expect(stored.file_name).toBe('event-payload.json');
    expect(stored.mime_type).toBe('application/json');
    expect(Buffer.from(stored.data).equals(Buffer.from(body))).toBe(true);
    expect(
      readFileSync(join(env.workspaceRoot, runId, '.attachments', 'event-payload.json'), 'utf8'),
    ).toBe(body);
    const byMetadata = await api.get(`/agent/runs?metadata[delivery_id]=dep-100`);
    expect(byMetadata.body.runs.map((r: { run_id: string }) => r.run_id)).toEqual([runId]);
  });

  it('accepts and logs a delivery that matches nothing, and starts nothing', async () => {
    const res = await deliver(
      hook.local,
      '{"event":"deploy.finished","env":"dev","service":"api"}',
      { ...hook.auth, 'X-Ambient-Delivery-Id': 'dep-dev' },
    );
    expect(res.status).toBe(202);
    const entry = await entryFor('dep-dev');
    expect(entry!.runs).toEqual([]);
    expect((await api.get(`/agent/runs?metadata[delivery_id]=dep-dev`)).body.runs).toEqual([]);
  });

  it('starts a run for every matching automation, and none for a duplicate', async () => {
    await setAutomations(
      automation('triage', '      payload:\n        event: [deploy.finished]\n'),
      automation('notify', '      payload:\n        service: {exists: true}\n', 'Tell the team.'),
      automation('never', '      payload:\n        event: [other]\n'),
    );
    const body = '{"event":"deploy.finished","service":"web"}';
    await deliver(hook.local, body, { ...hook.auth, 'X-Ambient-Delivery-Id': 'fan-1' });
    const again = await deliver(hook.local, body, {
      ...hook.auth,
      'X-Ambient-Delivery-Id': 'fan-1',
    });
    expect(again.status).toBe(202);
    const entry = await entryFor('fan-1');
    expect(entry!.runs.map((r) => r.automation).sort()).toEqual(['notify', 'triage']);
    const runs = await api.get(`/agent/runs?metadata[delivery_id]=fan-1`);
    expect(runs.body.runs).toHaveLength(2);
  });

  it('starts nothing from a disabled automation whose filter matches, beside an enabled one that does', async () => {
    const paused = automation('paused', '      payload:\n        event: [deploy.finished]\n');
    paused.content = paused.content.replace(/^---\n/, '---\nenabled: false\n');
    await setAutomations(
      automation('triage', '      payload:\n        event: [deploy.finished]\n'),
      automation('notify', '      payload:\n        service: {exists: true}\n', 'Tell the team.'),
      automation('never', '      payload:\n        event: [other]\n'),
      paused,
    );
    const listed = (await api.get(`/factory/${factory}/automations`)).body.automations as {
      name: string;
      enabled: boolean;
    }[];
    expect(listed.find((a) => a.name === 'paused')).toMatchObject({ enabled: false });
    const res = await deliver(hook.local, '{"event":"deploy.finished","service":"web"}', {
      ...hook.auth,
      'X-Ambient-Delivery-Id': 'off-1',
    });
    expect(res.status).toBe(202);
    const entry = await entryFor('off-1');
    expect(entry!.runs.map((r) => r.automation).sort()).toEqual(['notify', 'triage']);
    const runs = await api.get(`/agent/runs?metadata[delivery_id]=off-1`);
    expect(runs.body.runs).toHaveLength(2);
  });

  it('commits a concurrent burst with repeats as one Accepted per identity, each starting its run once', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `burst-${i}`);
    const results = await Promise.all(
      [...ids, ...ids].map((id) =>
        deliver(hook.local, `{"event":"deploy.finished","id":"${id}"}`, {
          ...hook.auth,
          'X-Ambient-Delivery-Id': id,
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(202));
    for (const id of ids) {
      const entry = await entryFor(id);
      expect(entry!.runs.map((r) => r.automation)).toEqual(['triage']);
    }
    const log = (await api.get(`/factory/${factory}/webhooks/${hook.uid}/deliveries?limit=100`))
      .body.deliveries as { delivery_id: string; status: string }[];
    for (const id of ids) {
      const statuses = log.filter((e) => e.delivery_id === id).map((e) => e.status);
      expect(statuses.sort()).toEqual(['Accepted', 'Duplicate']);
      const runs = await api.get(`/agent/runs?metadata[delivery_id]=${id}`);
      expect(runs.body.runs).toHaveLength(1);
    }
  });

  it('tests a filter against a stored delivery: which check failed', async () => {
    await deliver(hook.local, '{"event":"deploy.started","service":"web"}', {
      ...hook.auth,
      'X-Ambient-Delivery-Id': 'tf-1',
    });
    const entry = await entryFor('tf-1');
    const url = `/factory/${factory}/webhooks/${hook.uid}/deliveries/${entry!.id}/test-filter`;
    const triage = await api.post(url, { automation: 'triage' });
    expect(triage.body).toMatchObject({
      result: 'Would not trigger',
      would_trigger: false,
      automation_enabled: true,
      triggers: [
        { webhook_check: { passed: true }, payload_check: { passed: false, failed_key: 'event' } },
      ],
    });
    expect((await api.post(url, { automation: 'notify' })).body.result).toBe('Would trigger');
    const inline = await api.post(url, {
      filter: { webhook_ids: ['AAAAAAAAAAAAAAAAAAAAAA'], payload: { service: ['web'] } },
    });
    expect(inline.body).toMatchObject({
      result: 'Would not trigger',
      triggers: [{ webhook_check: { passed: false }, payload_check: { passed: true } }],
    });
    expect(
      (await api.post(url, { filter: { webhook_ids: [hook.uid], payload: { a: [] } } })).body
        .detail,
    ).toMatch(/^filter\.payload\.a: must list at least one value/);
    expect((await api.post(url, {})).status).toBe(400);
    expect((await api.post(url, { automation: 'ghost' })).status).toBe(404);
  });

  it('re-enqueues accepted deliveries whose job was lost (Redis outage): nothing is lost', async () => {
    await startApp(['api', 'ingress']);
    const res = await deliver(hook.local, '{"event":"deploy.finished","service":"lost"}', {
      ...hook.auth,
      'X-Ambient-Delivery-Id': 'lost-1',
    });
    expect(res.status).toBe(202);
    // The queued evaluation disappears, as if Redis had been flushed.
    await app.ambient.app
      .get(DeliveryEvaluationQueue, { strict: false })
      .queue.obliterate({ force: true });
    await startApp(['api', 'ingress', 'worker']);
    const entry = await entryFor('lost-1');
    expect(entry!.runs.map((r) => r.automation).sort()).toEqual(['notify', 'triage']);
  });

  it('keeps automations that select a deleted webhook visible; they never fire again', async () => {
    expect((await api.delete(`/factory/${factory}/webhooks/${hook.uid}`)).status).toBe(204);
    const automations = await api.get(`/factory/${factory}/automations`);
    expect(automations.body.automations.map((a: { name: string }) => a.name)).toContain('triage');
    expect(automations.body.automations[0].triggers[0].webhook_ids).toEqual([hook.uid]);
    expect((await deliver(hook.local, '{"event":"deploy.finished"}', hook.auth)).status).toBe(404);
    // Re-applying a definition whose automations still name the deleted UID is fine.
    await setAutomations(automation('triage', ''));
  });
});
