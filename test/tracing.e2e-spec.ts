import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { createFactory, createWebhook, deliver } from './support/webhook-helpers';
import { OtlpReceiver, ReceivedSpan, startOtlpReceiver } from './support/otlp-receiver';
import { createTestEnvironment, TEST_API_KEY, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';
import { spawnAmbient, startedUrls, waitForExit } from './support/worker-process';

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

/**
 * OpenTelemetry across processes: an api process and a separate worker process export to an
 * in-process OTLP receiver, and one run is one trace from the HTTP request to the model call.
 * Ambient runs as child processes because tracing must start before its modules load.
 */
describe('tracing (OpenTelemetry through Bull)', () => {
  let receiver: OtlpReceiver;
  let model: FakeModelServer;
  let env: TestEnvironment;
  const children: ReturnType<typeof spawnAmbient>[] = [];

  const start = async (roles: string, extra: Record<string, string> = {}) => {
    const child = spawnAmbient(
      env.childEnv({
        AMBIENT_ROLES: roles,
        AMBIENT_PORT: '0',
        AMBIENT_HOST: '127.0.0.1',
        AMBIENT_BOOTSTRAP_API_KEY: TEST_API_KEY,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        ...extra,
      }),
    );
    children.push(child);
    await child.ready;
    return child;
  };

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    model = await startFakeModelServer();
    env = createTestEnvironment('tracing', model.url);
  });

  afterAll(async () => {
    for (const child of children) {
      child.child.kill('SIGKILL');
      await waitForExit(child.child);
    }
    await env?.destroy();
    await model?.close();
    await receiver?.close();
  });

  /** An api + ingress process and a worker process, started once for the tests that share them. */
  let shared: Promise<{ client: ReturnType<typeof apiClient>; ingressUrl: string }> | undefined;
  const apiAndWorker = () =>
    (shared ??= Promise.all([start('api,ingress'), start('worker')]).then(([api]) => ({
      client: apiClient(startedUrls(api.output()).apiUrl!, TEST_API_KEY),
      ingressUrl: startedUrls(api.output()).ingressUrl!,
    })));

  it('one trace covers POST /agent/run in the api process and the run in the worker process', async () => {
    const { client } = await apiAndWorker();

    // A share token in a path, a signature in a query: neither may reach a span (as in the log).
    const shareToken = 'tracedsharetoken0123456789';
    await client.post(`/agent/environments/shared/${shareToken}/accept`, {});
    await client.get('/agent/models?signature=tracedsignature0123').expect(200);
    const created = await client.post('/agent/run', { prompt: 'Trace me' }).expect(200);
    const runId: string = created.body.run_id;
    await waitFor(
      () => client.runState(runId),
      (state) => state === 'SUCCEEDED',
      { what: 'the run to succeed' },
    );

    const request = await receiver
      .waitFor(
        (spans) => spans.some((s) => isRunRequest(s)),
        'the server span of POST /api/v1/agent/run',
      )
      .then((spans) => spans.find(isRunRequest)!);
    const inTrace = (spans: ReceivedSpan[]) => spans.filter((s) => s.traceId === request.traceId);
    const trace = await receiver.waitFor(
      (spans) =>
        inTrace(spans).some((s) => s.name.startsWith('chat ')) &&
        // The job's span ends last in the worker: the spans inside it were exported before.
        inTrace(spans).some((s) => s.name === 'process runs'),
      'the worker spans of the run',
    );
    const spans = inTrace(trace);
    const sharePath = '/api/v1/agent/environments/shared/[token]/accept';
    const all = await receiver.waitFor(
      (received) => received.some((s) => s.attributes['url.path'] === sharePath),
      'the span of the share-link request, its path redacted',
    );
    expect(JSON.stringify(all)).not.toContain(shareToken);
    expect(JSON.stringify(all)).not.toContain('tracedsignature0123');
    const byName = (name: string) => spans.filter((s) => s.name === name);

    // The api process: the request, the commit (mysql2), the enqueue (producer + ioredis).
    expect(request.resource['ambient.roles']).toBe('api,ingress');
    expect(request.resource['service.name']).toBe('ambient');
    const apiInstance = request.resource['service.instance.id'];
    const apiSpans = spans.filter((s) => s.resource['service.instance.id'] === apiInstance);
    expect(apiSpans.some((s) => s.attributes['db.system.name'] === 'mysql')).toBe(true);
    const send = byName('send runs');
    expect(send).toHaveLength(1);
    expect(send[0].attributes['ambient.run_id']).toBe(runId);
    expect(send[0].resource['service.instance.id']).toBe(apiInstance);
    expect(apiSpans.some((s) => s.attributes['db.system.name'] === 'redis')).toBe(true);

    // The worker process: the job, a child of the producer span across processes.
    const job = byName('process runs');
    expect(job).toHaveLength(1);
    expect(job[0].kind).toBe(CONSUMER);
    expect(job[0].parentSpanId).toBe(send[0].spanId);
    expect(job[0].attributes['ambient.run_id']).toBe(runId);
    expect(job[0].resource['ambient.roles']).toBe('worker');
    const workerInstance = job[0].resource['service.instance.id'];
    expect(workerInstance).not.toBe(apiInstance);
    expect(job[0].resource['process.pid']).not.toBe(request.resource['process.pid']);

    const execution = byName('run execution')[0];
    expect(execution.parentSpanId).toBe(job[0].spanId);
    expect(execution.attributes).toMatchObject({
      'ambient.run_id': runId,
      'ambient.harness': 'oz',
      'ambient.model_id': 'fake-model',
      'ambient.outcome': 'succeeded',
    });
    const call = spans.find((s) => s.name === 'chat fake-model')!;
    expect(call.kind).toBe(CLIENT);
    expect(call.parentSpanId).toBe(execution.spanId);
    expect(call.attributes).toMatchObject({
      'ambient.run_id': runId,
      'gen_ai.request.model': 'fake-model',
      'gen_ai.system': 'unknown',
    });
    expect(call.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(call.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    const workerSpans = spans.filter((s) => s.resource['service.instance.id'] === workerInstance);
    expect(workerSpans.some((s) => s.attributes['db.system.name'] === 'mysql')).toBe(true);
    expect(workerSpans.some((s) => s.attributes['db.system.name'] === 'redis')).toBe(true);
  }, 180_000); // two child processes start, each loading the SDK: slow on a busy machine

  it('one trace covers a webhook delivery, its evaluation job and the run it starts', async () => {
    const { client, ingressUrl } = await apiAndWorker();
    const factory = await createFactory(client);
    const hook = await createWebhook(client, factory, { name: 'traced' });
    const definition = await client.get(`/factory/${factory}/definition`).expect(200);
    const automation = {
      path: 'automations/traced/automation.md',
      content: `---\nmodel: fake-model\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [${hook.uid}]\n---\nHandle it.\n`,
    };
    await client
      .put(`/factory/${factory}/definition`, { files: [...definition.body.files, automation] })
      .expect(200);

    const delivery = await deliver(`${ingressUrl}/webhooks/w/${hook.uid}`, '{"event":"x"}', {
      Authorization: `Bearer ${hook.secret}`,
    });
    expect(delivery.status).toBe(202);

    const isDelivery = (s: ReceivedSpan) =>
      s.kind === SERVER && s.attributes['http.route'] === '/webhooks/w/:uid';
    const spans = await receiver.waitFor((all) => {
      const request = all.find(isDelivery);
      return (
        !!request &&
        all.some((s) => s.traceId === request.traceId && s.name === 'process runs') &&
        all.some((s) => s.traceId === request.traceId && s.name.startsWith('chat '))
      );
    }, 'the spans of the delivery, its evaluation and its run');
    const request = spans.find(isDelivery)!;
    const inTrace = spans.filter((s) => s.traceId === request.traceId);
    const one = (name: string) => {
      const found = inTrace.filter((s) => s.name === name);
      expect([name, found.length]).toEqual([name, 1]);
      return found[0];
    };
    const sendDelivery = one('send webhook-deliveries');
    const evaluation = one('process webhook-deliveries');
    const sendRun = one('send runs');
    const job = one('process runs');
    expect(evaluation.parentSpanId).toBe(sendDelivery.spanId);
    expect(evaluation.resource['ambient.roles']).toBe('worker');
    expect(job.parentSpanId).toBe(sendRun.spanId);
    const runId = job.attributes['ambient.run_id'];
    expect(sendRun.attributes['ambient.run_id']).toBe(runId);
    // The evaluation (worker) created the run, inside the delivery's trace.
    expect(sendRun.resource['ambient.roles']).toBe('worker');
    expect(inTrace.find((s) => s.name.startsWith('chat '))!.attributes['ambient.run_id']).toBe(
      runId,
    );
  }, 180_000);

  it('flushes the spans it still holds when it shuts down (SIGTERM)', async () => {
    // Batches would go out only after 10 minutes: what arrives, the shutdown sent.
    const api = await start('api', { OTEL_BSP_SCHEDULE_DELAY: '600000' });
    const apiUrl = startedUrls(api.output()).apiUrl!;
    await apiClient(apiUrl, TEST_API_KEY).get('/agent/runs').expect(200);
    const isList = (s: ReceivedSpan) =>
      s.kind === SERVER && s.attributes['http.route'] === '/api/v1/agent/runs';
    expect(receiver.spans.some(isList)).toBe(false);

    api.child.kill('SIGTERM');
    expect(await waitForExit(api.child)).toBe(0);
    await receiver.waitFor((spans) => spans.some(isList), 'the spans flushed at shutdown');
  }, 120_000);
});

function isRunRequest(span: ReceivedSpan): boolean {
  return (
    span.kind === SERVER &&
    span.attributes['http.request.method'] === 'POST' &&
    span.attributes['http.route'] === '/api/v1/agent/run'
  );
}
