import { SpanKind, trace } from '@opentelemetry/api';
import { NodeSDK, tracing } from '@opentelemetry/sdk-node';
import {
  currentJobTrace,
  enqueueTraced,
  JobTrace,
  processJob,
  TracedJobData,
  withSpan,
} from './tracing';

describe('trace context through job data', () => {
  const exporter = new tracing.InMemorySpanExporter();
  const sdk = new NodeSDK({
    spanProcessors: [new tracing.SimpleSpanProcessor(exporter)],
    instrumentations: [],
    autoDetectResources: false,
  });

  beforeAll(() => sdk.start());
  afterAll(() => sdk.shutdown());
  beforeEach(() => exporter.reset());

  const span = (name: string) => exporter.getFinishedSpans().find((s) => s.name === name)!;

  it('carries nothing when no span is active', () => {
    expect(currentJobTrace()).toBeUndefined();
  });

  it('makes the processing a child of the producer span, in the same trace', async () => {
    let stored: TracedJobData = {};
    await withSpan('POST /api/v1/agent/run', { kind: SpanKind.SERVER }, () =>
      enqueueTraced('runs', { 'ambient.run_id': 'r1' }, async (carried) => {
        stored = { trace: carried };
      }),
    );
    expect(stored.trace?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    const seen = await processJob(
      'runs',
      { id: 'r1', data: stored },
      { a: 1 },
      async () => trace.getActiveSpan()?.spanContext().traceId,
    );
    const request = span('POST /api/v1/agent/run');
    const send = span('send runs');
    const job = span('process runs');
    expect(seen).toBe(request.spanContext().traceId);
    expect(send.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(job.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    expect(job.kind).toBe(SpanKind.CONSUMER);
    expect(job.attributes).toMatchObject({
      'messaging.system': 'bull',
      'messaging.destination.name': 'runs',
      'messaging.message.id': 'r1',
      a: 1,
    });
  });

  it('processes a job without a trace, or with a broken one, as the root of a new trace', async () => {
    const broken = { traceparent: 'not a traceparent' } as JobTrace;
    for (const data of [{}, { trace: broken }, { trace: 42 as unknown as JobTrace }]) {
      exporter.reset();
      await expect(processJob('runs', { data }, {}, async () => 'done')).resolves.toBe('done');
      const job = span('process runs');
      expect(job.parentSpanContext).toBeUndefined();
    }
  });

  it('records a failure on the span and rethrows it', async () => {
    await expect(
      withSpan('run execution', {}, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const failed = span('run execution');
    expect(failed.status).toMatchObject({ code: 2, message: 'boom' });
    expect(failed.events[0].name).toBe('exception');
  });
});
