import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';
import { createFactory, createWebhook, deliver } from './support/webhook-helpers';

interface LogEntry {
  id: string;
  delivery_id: string;
  status: string;
  evaluated_at?: string | null;
  runs?: { automation: string; run_id: string | null; error: string | null }[];
  redelivery_of?: string;
  payload?: unknown;
}

/** Redelivering a logged delivery: its stored payload starts the automations' runs again. */
describe('webhook redelivery (POST …/deliveries/{id}/redeliver)', () => {
  const { app, api } = useTestApp('wh_redeliver', ['api', 'ingress', 'worker'], {
    'webhooks.sweepIntervalMs': 200,
    'webhooks.sweepGraceMs': 300,
  });
  let factory: string;
  let hook: { uid: string; url: string; auth: Record<string, string> };
  const deliveries = () => `/factory/${factory}/webhooks/${hook.uid}/deliveries`;

  const evaluated = (entryId: string) =>
    waitFor(
      async () => (await api.get(`${deliveries()}/${entryId}`)).body as LogEntry,
      (entry) => !!entry.evaluated_at,
      { what: `delivery entry ${entryId} to be evaluated` },
    );

  const attachedPayload = async (runId: string) => {
    const [stored] = (await app.dataSource.query(
      `SELECT file_name, data FROM run_attachments WHERE run_id = ?`,
      [runId],
    )) as { file_name: string; data: Buffer }[];
    return { fileName: stored.file_name, body: Buffer.from(stored.data).toString('utf8') };
  };

  beforeAll(async () => {
    factory = await createFactory(api);
    const created = await createWebhook(api, factory, { name: 'deploys' });
    hook = {
      uid: created.uid,
      url: `${app.ingressUrl}/webhooks/w/${created.uid}`,
      auth: { Authorization: `Bearer ${created.secret}` },
    };
    const current = (await api.get(`/factory/${factory}/definition`)).body.files as object[];
    const res = await api.put(`/factory/${factory}/definition`, {
      files: [
        ...current,
        {
          path: 'automations/triage/automation.md',
          content: `---\nmodel: fake-model\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [${hook.uid}]\n      payload:\n        event: [deploy.finished]\n---\nHandle the deployment event.\n`,
        },
      ],
    });
    expect(res.status).toBe(200);
  });

  it('logs a new entry linked to the original whose run gets the same payload, and audits it', async () => {
    const body = '{ "event": "deploy.finished", "service": "api", "note": "héllo ✓" }';
    const sent = await deliver(hook.url, body, { ...hook.auth, 'X-Ambient-Delivery-Id': 'dep-1' });
    expect(sent.status).toBe(202);
    const log = (await api.get(deliveries())).body.deliveries as LogEntry[];
    const original = await evaluated(log.find((d) => d.delivery_id === 'dep-1')!.id);
    const firstRun = original.runs![0].run_id!;

    // The sender's own re-send is a duplicate and starts nothing...
    const again = await deliver(hook.url, body, { ...hook.auth, 'X-Ambient-Delivery-Id': 'dep-1' });
    expect(again.status).toBe(202);

    // ...a redelivery starts the automation's run again.
    const res = await api.post(`${deliveries()}/${original.id}/redeliver`, {});
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: expect.any(String),
      delivery_id: 'dep-1-redelivery-1',
      status: 'Accepted',
      size_bytes: Buffer.byteLength(body),
      received_at: expect.any(String),
      evaluated_at: null,
      runs: [],
      redelivery_of: original.id,
    });
    const redelivered = await evaluated(res.body.id as string);
    expect(redelivered.runs).toEqual([
      { automation: 'triage', run_id: expect.any(String), error_code: null, error: null },
    ]);
    const secondRun = redelivered.runs![0].run_id!;
    expect(secondRun).not.toBe(firstRun);
    expect(await attachedPayload(secondRun)).toEqual({ fileName: 'event-payload.json', body });
    expect(redelivered.payload).toEqual(JSON.parse(body));
    const run = (await api.get(`/agent/runs/${secondRun}`)).body;
    expect(run.source).toBe('CUSTOM_WEBHOOK');
    expect(run.prompt).toContain('Delivery ID: dep-1-redelivery-1');

    const listed = (await api.get(deliveries())).body.deliveries as LogEntry[];
    expect(listed[0]).toMatchObject({ id: res.body.id, redelivery_of: original.id });
    expect(listed.filter((d) => d.delivery_id === 'dep-1').map((d) => d.status)).toEqual([
      'Duplicate',
      'Accepted',
    ]);
    expect(listed.find((d) => d.id === original.id)!.redelivery_of).toBeUndefined();

    const second = await api.post(`${deliveries()}/${original.id}/redeliver`, {});
    expect(second.status).toBe(202);
    expect(second.body.delivery_id).toBe('dep-1-redelivery-2');

    const audit = await api.get(`/audit-events?action=webhook.redeliver`);
    expect(audit.body.events).toEqual([
      expect.objectContaining({
        target: { type: 'webhook', id: hook.uid },
        outcome: 'success',
        details: expect.objectContaining({ delivery: original.id, redelivery: second.body.id }),
      }),
      expect.objectContaining({
        details: expect.objectContaining({ delivery: original.id, redelivery: res.body.id }),
      }),
    ]);
  });

  it('evaluates against the automations as they are now', async () => {
    const sent = await deliver(hook.url, '{"event":"deploy.started"}', {
      ...hook.auth,
      'X-Ambient-Delivery-Id': 'dep-2',
    });
    expect(sent.status).toBe(202);
    const log = (await api.get(deliveries())).body.deliveries as LogEntry[];
    const original = await evaluated(log.find((d) => d.delivery_id === 'dep-2')!.id);
    expect(original.runs).toEqual([]);
    const files = (await api.get(`/factory/${factory}/definition`)).body.files as {
      path: string;
      content: string;
    }[];
    const widened = files.map((f) =>
      f.path === 'automations/triage/automation.md'
        ? {
            ...f,
            content: f.content.replace('[deploy.finished]', '[deploy.finished, deploy.started]'),
          }
        : f,
    );
    expect((await api.put(`/factory/${factory}/definition`, { files: widened })).status).toBe(200);
    const res = await api.post(`${deliveries()}/${original.id}/redeliver`, {});
    expect(res.status).toBe(202);
    const redelivered = await evaluated(res.body.id as string);
    expect(redelivered.runs).toEqual([
      { automation: 'triage', run_id: expect.any(String), error_code: null, error: null },
    ]);
  });

  it('gives concurrent redeliveries of one delivery distinct ids, each its own run', async () => {
    const sent = await deliver(hook.url, '{"event":"deploy.finished","n":3}', {
      ...hook.auth,
      'X-Ambient-Delivery-Id': 'dep-3',
    });
    expect(sent.status).toBe(202);
    const log = (await api.get(deliveries())).body.deliveries as LogEntry[];
    const original = log.find((d) => d.delivery_id === 'dep-3')!;
    const answers = await Promise.all(
      [1, 2, 3].map(() => api.post(`${deliveries()}/${original.id}/redeliver`, {})),
    );
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    expect(answers.map((a) => a.body.delivery_id as string).sort()).toEqual([
      'dep-3-redelivery-1',
      'dep-3-redelivery-2',
      'dep-3-redelivery-3',
    ]);
    const runs = new Set<string>();
    for (const answer of answers) {
      const entry = await evaluated(answer.body.id as string);
      expect(entry.redelivery_of).toBe(original.id);
      runs.add(entry.runs![0].run_id!);
    }
    expect(runs.size).toBe(3);
  });

  it('answers 404 for an unknown webhook or delivery, 409 for a delivery without a payload, and changes nothing', async () => {
    const count = async () =>
      Number(
        (
          (await app.dataSource.query(`SELECT COUNT(*) AS n FROM webhook_deliveries`)) as {
            n: string;
          }[]
        )[0].n,
      );
    const before = await count();
    const unknownDelivery = await api.post(`${deliveries()}/999999999/redeliver`, {});
    expect(unknownDelivery.status).toBe(404);
    expect(unknownDelivery.body.detail).toMatch(/delivery "999999999" not found/);
    const badId = await api.post(`${deliveries()}/not-an-id/redeliver`, {});
    expect(badId.status).toBe(404);
    const log = (await api.get(deliveries())).body.deliveries as LogEntry[];
    const unknownHook = await api.post(
      `/factory/${factory}/webhooks/Zz0000000000000000000z/deliveries/${log[0].id}/redeliver`,
      {},
    );
    expect(unknownHook.status).toBe(404);
    expect(unknownHook.body.detail).toMatch(/webhook "Zz0000000000000000000z" not found/);

    const duplicate = log.find((d) => d.status === 'Duplicate')!;
    const noPayload = await api.post(`${deliveries()}/${duplicate.id}/redeliver`, {});
    expect(noPayload.status).toBe(409);
    expect(noPayload.body.detail).toMatch(
      /is Duplicate: only Accepted deliveries keep a payload to redeliver/,
    );

    expect((await api.post(`/factory/${factory}/webhooks/${hook.uid}/disable`, {})).status).toBe(
      200,
    );
    const disabled = await api.post(`${deliveries()}/${log[0].id}/redeliver`, {});
    expect(disabled.status).toBe(409);
    expect(disabled.body.detail).toMatch(/is disabled .*enable it to redeliver/);
    expect((await api.post(`/factory/${factory}/webhooks/${hook.uid}/enable`, {})).status).toBe(
      200,
    );
    expect(await count()).toBe(before);
  });

  it('refuses members and viewers (webhooks.write) with 403, logging nothing new', async () => {
    const log = (await api.get(deliveries())).body.deliveries as LogEntry[];
    const accepted = log.find((d) => d.status === 'Accepted')!;
    for (const role of ['member', 'viewer']) {
      const key = await api.post('/api-keys', { name: `${role} key`, role });
      expect(key.status).toBe(201);
      const caller = apiClient(app.baseUrl, key.body.key as string);
      const res = await caller.post(`${deliveries()}/${accepted.id}/redeliver`, {});
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/webhooks\.write/);
      expect((await caller.get(deliveries())).status).toBe(200);
    }
    const after = (await api.get(deliveries())).body.deliveries as LogEntry[];
    expect(after.map((d) => d.id)).toEqual(log.map((d) => d.id));
  });
});
