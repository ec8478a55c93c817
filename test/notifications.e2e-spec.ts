import { Webhook } from 'standardwebhooks';
import {
  NotificationReceiver,
  ReceivedNotification,
  startNotificationReceiver,
} from './fixtures/notification-receiver';
import { NotificationSweeper } from '../src/modules/notifications/notification-sweeper.service';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  format: string;
  enabled: boolean;
  secret?: string;
}

interface Delivery {
  id: string;
  message_id: string;
  event: string;
  status: string;
  attempts: number;
  response_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  payload: { type: string; data: { run: { id: string; state: string } } };
}

const BACKOFF_BASE_MS = 150;
const MAX_ATTEMPTS = 4;

/** Outgoing notification webhooks, to a local receiver that AMBIENT_EGRESS_ALLOW lists. */
describe('notification endpoints (outgoing webhooks)', () => {
  let receiver: NotificationReceiver;
  beforeAll(async () => {
    receiver = await startNotificationReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });
  const { model, api, app } = useTestApp('notifications', ['api', 'worker'], () => ({
    'egress.allow': `127.0.0.1:${receiver.port}`,
    'notifications.backoffBaseMs': BACKOFF_BASE_MS,
    'notifications.backoffCapMs': 4 * BACKOFF_BASE_MS,
    'notifications.maxAttempts': MAX_ATTEMPTS,
    'notifications.sweepIntervalMs': 200,
    'notifications.sweepGraceMs': 500,
  }));

  const createEndpoint = async (body: Record<string, unknown>): Promise<Endpoint> => {
    const res = await api.post('/notification-endpoints', body);
    expect(res.status).toBe(201);
    return res.body as Endpoint;
  };

  const deliveries = async (endpointId: string): Promise<Delivery[]> => {
    const res = await api.get(`/notification-endpoints/${endpointId}/deliveries`);
    expect(res.status).toBe(200);
    return res.body.deliveries as Delivery[];
  };

  const deliveryOf = (endpointId: string, runId: string, accept: (d: Delivery) => boolean) =>
    waitFor(
      async () => (await deliveries(endpointId)).find((d) => d.payload.data.run.id === runId),
      (d) => !!d && accept(d),
      { what: `the delivery of run ${runId} to endpoint ${endpointId}` },
    ) as Promise<Delivery>;

  const received = (path: string, runId: string): ReceivedNotification[] =>
    receiver.received.filter((r) => r.path === path && r.body.includes(runId));

  /** A real run through the fake model server, awaited until it ends. */
  const endedRun = async (prompt: string, title?: string) => {
    const created = await api.post('/agent/runs', { prompt, ...(title ? { title } : {}) });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    await waitFor(
      () => api.runState(runId),
      (state) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(state),
      { what: `run ${runId} to end` },
    );
    return (await api.get(`/agent/runs/${runId}`)).body as {
      run_id: string;
      state: string;
      status_message: Record<string, unknown> | null;
    };
  };

  const verified = (secret: string, request: ReceivedNotification) =>
    new Webhook(secret).verify(request.body, request.headers as Record<string, string>);

  it('refuses bad input with the field named and changes nothing; only admins reach the API', async () => {
    const refusals: [Record<string, unknown>, string][] = [
      [{ url: 'http://127.0.0.1:9/hook', events: ['run.failed'] }, 'url'],
      [{ url: 'http://127.0.0.2:8080/hook', events: ['run.failed'] }, 'url'],
      [{ url: 'http://169.254.169.254/latest', events: ['run.failed'] }, 'url'],
      [{ url: `ftp://127.0.0.1:${receiver.port}/x`, events: ['run.failed'] }, 'url'],
      [{ url: 'not a url', events: ['run.failed'] }, 'url'],
      [{ url: `${receiver.url}/x`, events: [] }, 'events'],
      [{ url: `${receiver.url}/x`, events: ['run.exploded'] }, 'events'],
      [{ url: `${receiver.url}/x`, events: ['run.failed'], format: 'teams' }, 'format'],
    ];
    for (const [body, field] of refusals) {
      const res = await api.post('/notification-endpoints', body);
      expect([res.status, res.body.detail]).toEqual([400, expect.stringContaining(field)]);
    }
    // AMBIENT_EGRESS_ALLOW lists the receiver's port only: 127.0.0.1 elsewhere is refused.
    const loopback = await api.post('/notification-endpoints', {
      url: 'http://127.0.0.1:9/hook',
      events: ['run.failed'],
    });
    expect(loopback.body.detail).toMatch(/^url: .*AMBIENT_EGRESS_ALLOW/);
    expect((await api.get('/notification-endpoints')).body.endpoints).toEqual([]);

    for (const role of ['member', 'viewer']) {
      const key = await api.post('/api-keys', { name: `${role} key`, role });
      const caller = apiClient(app.baseUrl, key.body.key as string);
      const list = await caller.get('/notification-endpoints');
      expect([list.status, list.body.error]).toEqual([403, expect.stringContaining('admin')]);
      const create = await caller.post('/notification-endpoints', {
        url: `${receiver.url}/x`,
        events: ['run.failed'],
      });
      expect(create.status).toBe(403);
    }
    expect((await api.get('/notification-endpoints')).body.endpoints).toEqual([]);
  });

  it("delivers a run's end signed as Standard Webhooks, retrying after 500s with growing delays", async () => {
    receiver.answer('/flaky', (n) => (n <= 2 ? 500 : 200));
    const endpoint = await createEndpoint({
      url: `${receiver.url}/flaky`,
      events: ['run.succeeded'],
    });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const listed = (await api.get('/notification-endpoints')).body.endpoints as Endpoint[];
    expect(listed).toEqual([
      {
        id: endpoint.id,
        url: `${receiver.url}/flaky`,
        events: ['run.succeeded'],
        format: 'standard',
        enabled: true,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        secret_updated_at: expect.any(String),
      },
    ]);

    model.script('notify-ok', [{ text: 'All green.' }]);
    const run = await endedRun('Check the build [script:notify-ok]', 'Nightly build');
    expect(run.state).toBe('SUCCEEDED');
    const delivery = await deliveryOf(endpoint.id, run.run_id, (d) => d.status === 'succeeded');
    expect(delivery).toMatchObject({
      event: 'run.succeeded',
      attempts: 3,
      response_code: 200,
      last_error: null,
      next_attempt_at: null,
    });

    const requests = received('/flaky', run.run_id);
    expect(requests).toHaveLength(3);
    for (const request of requests) {
      expect(verified(endpoint.secret!, request)).toEqual(delivery.payload);
      expect(request.headers['webhook-id']).toBe(delivery.message_id);
    }
    expect(delivery.payload).toEqual({
      type: 'run.succeeded',
      timestamp: expect.any(String),
      data: {
        run: {
          id: run.run_id,
          state: 'SUCCEEDED',
          title: 'Nightly build',
          status_message: { message: 'All green.' },
          session_link: expect.stringMatching(new RegExp(`/console/runs/${run.run_id}$`)),
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      },
    });
    // The waits only grow: at least base, then 2 × base (they are never shorter than scheduled).
    const gaps = [requests[1].at - requests[0].at, requests[2].at - requests[1].at];
    expect(gaps[0]).toBeGreaterThanOrEqual(BACKOFF_BASE_MS);
    expect(gaps[1]).toBeGreaterThanOrEqual(2 * BACKOFF_BASE_MS);
  });

  it('emits run.failed and run.cancelled for real runs, in the transaction that ends them', async () => {
    const all = await createEndpoint({
      url: `${receiver.url}/all`,
      events: ['run.succeeded', 'run.failed', 'run.cancelled'],
    });
    const onlySucceeded = await createEndpoint({
      url: `${receiver.url}/succeeded-only`,
      events: ['run.succeeded'],
    });
    const disabled = await createEndpoint({
      url: `${receiver.url}/disabled`,
      events: ['run.failed'],
      enabled: false,
    });

    model.script('notify-refused', [{ status: 401, error: 'invalid api key' }]);
    const failed = await endedRun('Try [script:notify-refused]');
    expect(failed.state).toBe('FAILED');
    // The delivery rows commit with the run's end: they are there as soon as the run ended.
    expect((await deliveries(all.id)).map((d) => [d.event, d.payload.data.run.id])).toContainEqual([
      'run.failed',
      failed.run_id,
    ]);
    expect((await deliveries(onlySucceeded.id)).map((d) => d.payload.data.run.id)).not.toContain(
      failed.run_id,
    );
    expect(await deliveries(disabled.id)).toEqual([]);
    const failure = await deliveryOf(all.id, failed.run_id, (d) => d.status === 'succeeded');
    expect(failure.payload.data.run).toMatchObject({
      state: 'FAILED',
      status_message: failed.status_message,
    });
    expect(verified(all.secret!, received('/all', failed.run_id)[0])).toMatchObject({
      type: 'run.failed',
    });

    model.script('notify-hang', [{ hang: true }]);
    const calls = () => model.requests.filter((r) => r.script === 'notify-hang').length;
    const runId = (await api.post('/agent/runs', { prompt: 'Think long [script:notify-hang]' }))
      .body.run_id as string;
    await waitFor(
      async () => calls(),
      (n) => n > 0,
      { what: 'the model call' },
    );
    expect((await api.post(`/agent/runs/${runId}/cancel`)).status).toBe(200);
    const cancelled = await deliveryOf(all.id, runId, (d) => d.status === 'succeeded');
    expect(cancelled).toMatchObject({ event: 'run.cancelled', attempts: 1, response_code: 200 });
    expect(cancelled.payload.data.run.state).toBe('CANCELLED');
    expect(verified(all.secret!, received('/all', runId)[0])).toMatchObject({
      type: 'run.cancelled',
    });
  });

  it('fails a delivery after the last attempt; a resend then succeeds and is audited', async () => {
    let down = true;
    receiver.answer('/down', () => (down ? 500 : 204));
    const endpoint = await createEndpoint({
      url: `${receiver.url}/down`,
      events: ['run.succeeded'],
    });
    model.script('notify-down', [{ text: 'Done.' }]);
    const run = await endedRun('Ping [script:notify-down]');
    const failed = await deliveryOf(endpoint.id, run.run_id, (d) => d.status === 'failed');
    expect(failed).toMatchObject({
      attempts: MAX_ATTEMPTS,
      response_code: 500,
      last_error: 'HTTP 500',
      next_attempt_at: null,
    });
    expect(received('/down', run.run_id)).toHaveLength(MAX_ATTEMPTS);

    const notFailed = (await deliveries(endpoint.id)).find((d) => d.status !== 'failed');
    expect(notFailed).toBeUndefined();
    down = false;
    const resent = await api.post(
      `/notification-endpoints/${endpoint.id}/deliveries/${failed.id}/resend`,
      {},
    );
    expect(resent.status).toBe(202);
    expect(resent.body).toMatchObject({ id: failed.id, status: 'pending', attempts: 0 });
    const delivered = await deliveryOf(endpoint.id, run.run_id, (d) => d.status === 'succeeded');
    expect(delivered).toMatchObject({ attempts: 1, response_code: 204, last_error: null });
    const requests = received('/down', run.run_id);
    expect(requests).toHaveLength(MAX_ATTEMPTS + 1);
    expect(requests.map((r) => r.headers['webhook-id'])).toEqual(
      Array(MAX_ATTEMPTS + 1).fill(failed.message_id),
    );
    expect(verified(endpoint.secret!, requests.at(-1)!)).toEqual(delivered.payload);

    const again = await api.post(
      `/notification-endpoints/${endpoint.id}/deliveries/${failed.id}/resend`,
      {},
    );
    expect([again.status, again.body.detail]).toEqual([409, expect.stringContaining('succeeded')]);
    const audit = await api.get('/audit-events?action=notification_endpoint.resend');
    expect(audit.body.events).toEqual([
      expect.objectContaining({
        target: { type: 'notification_endpoint', id: endpoint.id },
        details: expect.objectContaining({ delivery: failed.id }),
      }),
    ]);
  });

  it("signs with the rotated secret only, and sends Slack's format when asked", async () => {
    const rotated = await createEndpoint({
      url: `${receiver.url}/rotated`,
      events: ['run.succeeded'],
    });
    const rotation = await api.post(`/notification-endpoints/${rotated.id}/rotate-secret`, {});
    expect(rotation.status).toBe(200);
    const secret = rotation.body.secret as string;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(rotated.secret);
    expect((await api.get(`/notification-endpoints/${rotated.id}`)).body.secret).toBeUndefined();

    const slack = await createEndpoint({ url: `${receiver.url}/slack`, events: ['run.failed'] });
    const patched = await api.patch(`/notification-endpoints/${slack.id}`, {
      format: 'slack',
      events: ['run.succeeded'],
    });
    expect(patched.body).toMatchObject({ format: 'slack', events: ['run.succeeded'] });

    model.script('notify-rotated', [{ text: 'Shipped.' }]);
    const run = await endedRun('Ship it [script:notify-rotated]', 'Release <v2> & notes');
    await deliveryOf(rotated.id, run.run_id, (d) => d.status === 'succeeded');
    const [signed] = received('/rotated', run.run_id);
    expect(verified(secret, signed)).toMatchObject({ type: 'run.succeeded' });
    expect(() => verified(rotated.secret!, signed)).toThrow();

    await waitFor(
      async () => receiver.received.filter((r) => r.path === '/slack').length,
      (n) => n > 0,
      { what: 'the Slack-format delivery' },
    );
    const [slackRequest] = receiver.received.filter((r) => r.path === '/slack');
    expect(JSON.parse(slackRequest.body)).toEqual({
      text: expect.stringMatching(
        new RegExp(
          `^Run “Release &lt;v2&gt; &amp; notes” succeeded: Shipped\\. <http[^|]+/console/runs/${run.run_id}\\|Open in Ambient>$`,
        ),
      ),
    });
    expect(verified(slack.secret!, slackRequest)).toEqual(JSON.parse(slackRequest.body));

    const actions = (await api.get('/audit-events?target_type=notification_endpoint')).body
      .events as { action: string; target: { id: string } }[];
    expect(actions.filter((e) => e.target.id === rotated.id).map((e) => e.action)).toEqual([
      'notification_endpoint.rotate_secret',
      'notification_endpoint.create',
    ]);
    const created = await api.get(
      `/audit-events?action=notification_endpoint.create&target_id=${rotated.id}`,
    );
    // The host only: a Slack webhook URL's path is a credential.
    expect(created.body.events[0].details).toEqual({
      url_host: `127.0.0.1:${receiver.port}`,
      events: ['run.succeeded'],
      format: 'standard',
      enabled: true,
    });

    expect((await api.delete(`/notification-endpoints/${slack.id}`)).status).toBe(204);
    expect((await api.get(`/notification-endpoints/${slack.id}`)).status).toBe(404);
  });

  it('sends a committed delivery whose job was lost: the sweeper queues it again', async () => {
    const endpoint = await createEndpoint({ url: `${receiver.url}/lost`, events: ['run.failed'] });
    // What a process that died between a run's end and the enqueue leaves: a due row, no job.
    const dueSince = new Date(Date.now() - 60_000);
    const payload = {
      type: 'run.failed',
      timestamp: dueSince.toISOString(),
      data: { run: { id: 'run-of-a-dead-process', state: 'FAILED' } },
    };
    await app.dataSource.query(
      `INSERT INTO notification_deliveries
         (endpoint_id, message_id, event, payload, status, attempts, next_attempt_at, created_at)
       VALUES (?, 'msg_lost', 'run.failed', ?, 'pending', 0, ?, ?)`,
      [endpoint.id, JSON.stringify(payload), dueSince, dueSince],
    );
    const delivered = await deliveryOf(
      endpoint.id,
      'run-of-a-dead-process',
      (d) => d.status === 'succeeded',
    );
    expect(delivered).toMatchObject({ message_id: 'msg_lost', attempts: 1, response_code: 200 });
    const [request] = received('/lost', 'run-of-a-dead-process');
    expect(verified(endpoint.secret!, request)).toEqual(payload);
  });

  it("deletes finished deliveries past the log's retention, never pending ones", async () => {
    const endpoint = await createEndpoint({ url: `${receiver.url}/old`, events: ['run.failed'] });
    const longAgo = new Date(Date.now() - 31 * 86_400_000);
    const later = new Date(Date.now() + 3_600_000);
    const insert = (messageId: string, status: string, nextAttemptAt: Date | null) =>
      app.dataSource.query(
        `INSERT INTO notification_deliveries
           (endpoint_id, message_id, event, payload, status, attempts, next_attempt_at, created_at)
         VALUES (?, ?, 'run.failed', '{}', ?, 1, ?, ?)`,
        [endpoint.id, messageId, status, nextAttemptAt, longAgo],
      );
    await insert('msg_old_sent', 'succeeded', null);
    await insert('msg_old_failed', 'failed', null);
    await insert('msg_old_retrying', 'pending', later);
    const count = async () =>
      Number(
        (
          (await app.dataSource.query(`SELECT COUNT(*) AS n FROM notification_deliveries`)) as {
            n: string;
          }[]
        )[0].n,
      );
    const before = await count();
    expect(await app.ambient.app.get(NotificationSweeper).housekeeping()).toBe(2);
    // The earlier tests' deliveries (finished, but recent) are all still logged.
    expect(await count()).toBe(before - 2);
    const kept = (await app.dataSource.query(
      `SELECT message_id FROM notification_deliveries WHERE endpoint_id = ?`,
      [endpoint.id],
    )) as { message_id: string }[];
    expect(kept.map((row) => row.message_id)).toEqual(['msg_old_retrying']);
  });
});
