import {
  Attributes,
  context,
  Context,
  propagation,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

/**
 * Ambient's spans, through the OpenTelemetry API alone: without the SDK (tracing off) every call
 * here is a no-op. src/bootstrap/tracing.ts starts the SDK.
 */
const tracer = trace.getTracer('ambient');

/** The W3C trace context a Bull job carries from the process that enqueued it to its worker. */
export interface JobTrace {
  traceparent: string;
  tracestate?: string;
}

/** Job data that may carry a trace context (absent in jobs enqueued untraced or before tracing). */
export interface TracedJobData {
  trace?: JobTrace;
}

/** The active trace context, to store in a job's data; undefined when nothing is being traced. */
export function currentJobTrace(active: Context = context.active()): JobTrace | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  if (!carrier.traceparent) return undefined;
  return carrier.tracestate
    ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate }
    : { traceparent: carrier.traceparent };
}

/** The context a job was enqueued in (the root context for a job without one). */
export function jobContext(data: TracedJobData | undefined): Context {
  const carrier = data?.trace;
  if (!carrier || typeof carrier.traceparent !== 'string') return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/**
 * Runs `work` in a span that ends when it settles; a rejection marks the span as an error.
 * `parent` defaults to the active context.
 */
export function withSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  return tracer.startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes },
    parent,
    async (span) => {
      try {
        return await work(span);
      } catch (err) {
        span.recordException(err instanceof Error ? err : String(err));
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * Enqueues in a PRODUCER span: `add` receives the trace context to store in the job's data, so
 * the job's processing becomes a child of this span (see `processJob`).
 */
export function enqueueTraced<T>(
  queue: string,
  attributes: Attributes,
  add: (trace: JobTrace | undefined) => Promise<T>,
): Promise<T> {
  return withSpan(
    `send ${queue}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        'messaging.system': 'bull',
        'messaging.operation.type': 'send',
        'messaging.destination.name': queue,
        ...attributes,
      },
    },
    () => add(currentJobTrace()),
  );
}

/** Processes a Bull job in a CONSUMER span, the child of the context its producer stored. */
export function processJob<T>(
  queue: string,
  job: { id?: string | number; data: TracedJobData },
  attributes: Attributes,
  work: () => Promise<T>,
): Promise<T> {
  return withSpan(
    `process ${queue}`,
    {
      kind: SpanKind.CONSUMER,
      parent: jobContext(job.data),
      attributes: {
        'messaging.system': 'bull',
        'messaging.operation.type': 'process',
        'messaging.destination.name': queue,
        ...(job.id !== undefined ? { 'messaging.message.id': String(job.id) } : {}),
        ...attributes,
      },
    },
    work,
  );
}

/** The attribute that names a run on every span about one. */
export const RUN_ID = 'ambient.run_id';
