import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import type { DataSource } from 'typeorm';
import { mysqlPool } from '../src/database/request-connections';
import { DELIVERIES_QUEUE } from '../src/modules/webhooks/delivery-evaluation.queue';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { parseScrape, scrape } from './support/prometheus';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';
import { createFactory, createWebhook, deliver } from './support/webhook-helpers';

/** The series of the metrics contract (CONTRACTS.md; the dashboard and alerts use these names). */
const SERIES = [
  'ambient_http_request_duration_seconds',
  'ambient_runs_created_total',
  'ambient_runs',
  'ambient_run_duration_seconds',
  'ambient_run_queue_to_start_seconds',
  'ambient_queue_jobs',
  'ambient_queue_oldest_job_age_seconds',
  'ambient_webhook_deliveries_total',
  'ambient_webhook_rate_limited_total',
  'ambient_schedule_firings_total',
  'ambient_self_hosted_workers_connected',
  'ambient_self_hosted_worker_disconnects_total',
  'ambient_db_background_connections',
  'ambient_db_background_oldest_wait_seconds',
  'ambient_stale_execution_writes_total',
  'ambient_model_tokens_total',
  'ambient_model_cost_usd_total',
  'ambient_run_cost_usd_total',
  'ambient_access_denied_total',
  'ambient_sandbox_pool_handouts_total',
  'ambient_sandbox_handout_seconds',
  'ambient_egress_requests_total',
  // Node's defaults, under Ambient's prefix.
  'ambient_process_cpu_user_seconds_total',
  'ambient_nodejs_eventloop_lag_seconds',
];

function poolSizeOf(dataSource: DataSource): number {
  const pool = mysqlPool(dataSource) as unknown as { config: { connectionLimit: number } };
  return pool.config.connectionLimit;
}

describe('Prometheus metrics (GET /metrics)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let metricsUrl: string;

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('metrics', model.url);
    app = await startTestApp(env, ['api', 'worker', 'ingress'], {
      'webhooks.deliveriesPerMinute': 1,
    });
    api = apiClient(app.baseUrl, app.apiKey);
    metricsUrl = app.ambient.metricsUrl!;
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  it('is served on its own loopback listener without a key, outside the OpenAPI document, with every series', async () => {
    expect(new URL(metricsUrl).hostname).toBe('127.0.0.1');
    expect(new URL(metricsUrl).port).not.toBe(new URL(app.baseUrl).port);
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const missing = SERIES.filter((name) => !text.includes(`# TYPE ${name} `));
    expect(missing).toEqual([]);
    const openapi = await api.get('/openapi.json');
    expect(Object.keys(openapi.body.paths as object).some((p) => p.includes('metrics'))).toBe(
      false,
    );
  });

  it('moves when a run is created and executed and a delivery is accepted', async () => {
    const before = await scrape(metricsUrl);
    model.script('metrics-run', [{ text: 'Counted.' }]);
    const created = await api.post('/agent/runs', { prompt: 'Count [script:metrics-run]' });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    await waitFor(
      () => api.runState(runId),
      (state) => state === 'SUCCEEDED',
      { what: `run ${runId} to succeed` },
    );

    const factory = await createFactory(api);
    const hook = await createWebhook(api, factory, { name: 'metered' });
    const local = `${app.ingressUrl}/webhooks/w/${hook.uid}`;
    const auth = { Authorization: `Bearer ${hook.secret}` };
    expect((await deliver(local, '{"n":1}', auth)).status).toBe(202);
    // The budget is one delivery a minute: the next is refused and counted as such.
    expect((await deliver(local, '{"n":2}', auth)).status).toBe(429);
    expect((await deliver(local, '{"n":3}', { Authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await fetch(`${app.baseUrl}/no-such-route/123`)).status).toBe(404);

    const after = await scrape(metricsUrl);
    const moved = (name: string, labels: Record<string, string> = {}) =>
      after.value(name, labels) - before.value(name, labels);

    expect(moved('ambient_runs_created_total', { source: 'API' })).toBe(1);
    expect(after.value('ambient_runs', { state: 'SUCCEEDED' })).toBe(1);
    expect(after.value('ambient_runs', { state: 'QUEUED' })).toBe(0);
    expect(moved('ambient_run_duration_seconds_count', { outcome: 'SUCCEEDED' })).toBe(1);
    expect(moved('ambient_run_duration_seconds_sum', { outcome: 'SUCCEEDED' })).toBeGreaterThan(0);
    expect(moved('ambient_run_queue_to_start_seconds_count', { outcome: 'SUCCEEDED' })).toBe(1);
    expect(
      moved('ambient_model_tokens_total', { model: 'fake-model', kind: 'input' }),
    ).toBeGreaterThan(0);
    expect(
      moved('ambient_model_tokens_total', { model: 'fake-model', kind: 'output' }),
    ).toBeGreaterThan(0);
    expect(moved('ambient_model_cost_usd_total', { model: 'fake-model' })).toBeGreaterThan(0);

    expect(moved('ambient_webhook_deliveries_total', { status: 'accepted' })).toBe(1);
    expect(moved('ambient_webhook_deliveries_total', { status: 'rejected_auth' })).toBe(1);
    expect(moved('ambient_webhook_rate_limited_total', { reason: 'deliveries' })).toBe(1);

    const http = 'ambient_http_request_duration_seconds_count';
    expect(moved(http, { method: 'POST', route: '/api/v1/agent/runs', status_code: '200' })).toBe(
      1,
    );
    expect(
      moved(http, { method: 'GET', route: '/api/v1/agent/runs/:runId', status_code: '200' }),
    ).toBeGreaterThan(0);
    expect(moved(http, { method: 'POST', route: '/webhooks/w/:uid', status_code: '202' })).toBe(1);
    expect(moved(http, { method: 'POST', route: '/webhooks/w/:uid', status_code: '429' })).toBe(1);
    // Unknown paths share one label: a scanner cannot create series.
    expect(moved(http, { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    expect(after.text).not.toContain('no-such-route');

    for (const state of ['waiting', 'active', 'delayed']) {
      expect(after.text).toContain(`ambient_queue_jobs{queue="runs",state="${state}"}`);
    }
    expect(after.value('ambient_queue_oldest_job_age_seconds', { queue: 'runs' })).toBe(0);
    expect(after.value('ambient_self_hosted_workers_connected')).toBe(0);
  });

  it('counts the waiting jobs of a queue and the age of the oldest one', async () => {
    const queue = app.ambient.app.get<Queue>(getQueueToken(DELIVERIES_QUEUE));
    await queue.pause(true);
    try {
      await queue.add('probe', { keys: [] }, { jobId: 'metrics-probe-job' });
      const seen = await waitFor(
        () => scrape(metricsUrl),
        (s) =>
          s.value('ambient_queue_jobs', { queue: 'webhook-deliveries', state: 'waiting' }) >= 1 &&
          s.value('ambient_queue_oldest_job_age_seconds', { queue: 'webhook-deliveries' }) > 0,
        { what: 'the waiting job to show' },
      );
      expect(
        seen.value('ambient_queue_oldest_job_age_seconds', { queue: 'webhook-deliveries' }),
      ).toBeLessThan(60);
    } finally {
      await (await queue.getJob('metrics-probe-job'))?.remove();
      await queue.resume(true);
    }
  });

  it('has its own listener for any roles, and is not on the API port', async () => {
    const separate = await startTestApp(env, ['api']);
    const workerOnly = await startTestApp(env, ['worker']);
    try {
      const own = separate.ambient.metricsUrl!;
      expect(new URL(own).port).not.toBe(new URL(separate.baseUrl).port);
      const scraped = await scrape(own);
      expect(scraped.value('ambient_runs', { state: 'SUCCEEDED' })).toBe(1);
      const onApi = await fetch(separate.baseUrl.replace(/\/api\/v1$/, '/metrics'));
      expect(onApi.status).toBe(404);
      expect((await fetch(own.replace(/\/metrics$/, '/other'))).status).toBe(404);

      // An API process's pool keeps a fifth for requests; a worker-only one keeps none.
      const poolSize = poolSizeOf(separate.dataSource);
      expect(scraped.value('ambient_db_background_connections', { state: 'limit' })).toBe(
        poolSize - Math.floor(poolSize / 5),
      );
      expect(scraped.value('ambient_db_background_oldest_wait_seconds')).toBe(0);

      expect(workerOnly.baseUrl).toBe('');
      const fromWorker = await scrape(workerOnly.ambient.metricsUrl!);
      expect(fromWorker.value('ambient_runs', { state: 'SUCCEEDED' })).toBe(1);
      expect(fromWorker.declares('ambient_run_duration_seconds')).toBe(true);
      expect(fromWorker.text).not.toContain('ambient_db_background_connections{');
    } finally {
      await separate.close();
      await workerOnly.close();
    }
  });

  it('does not time live run streams as requests (a stream lasts as long as its client watches)', async () => {
    const streaming = await startTestApp(env, ['api']);
    const client = apiClient(streaming.baseUrl, streaming.apiKey);
    const runId: string = (await client.post('/agent/runs', { prompt: 'Watched' })).body.run_id;
    await client.get(`/agent/runs/${runId}`).expect(200);
    const stream = await fetch(`${streaming.baseUrl}/agent/runs/${runId}/stream`, {
      headers: { Authorization: `Bearer ${streaming.apiKey}` },
    });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = stream.body!.getReader();
    await reader.read(); // the snapshot: the stream is open
    // Shutting down ends the stream from the server's side (a finished response).
    await streaming.close();
    const text = await streaming.ambient.metrics.registry.metrics();
    const count = (route: string) =>
      parseScrape(text).value('ambient_http_request_duration_seconds_count', { route });
    expect(count('/api/v1/agent/runs/:runId')).toBe(1);
    expect(count('/api/v1/agent/runs/:runId/stream')).toBe(0);
    await reader.cancel().catch(() => undefined);
  });
});
