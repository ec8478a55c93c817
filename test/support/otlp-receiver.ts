import { createServer, IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP JSON export carried it, with its resource's attributes beside it. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind number: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces). */
  url: string;
  spans: ReceivedSpan[];
  /** Resolves once the spans received so far satisfy `accept` (checked as each export arrives). */
  waitFor(
    accept: (spans: ReceivedSpan[]) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

interface OtlpKeyValue {
  key: string;
  value: Record<string, unknown>;
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: {
      spans?: (Omit<ReceivedSpan, 'attributes' | 'resource'> & { attributes?: OtlpKeyValue[] })[];
    }[];
  }[];
}

/**
 * An OpenTelemetry collector stand-in: accepts `POST /v1/traces` in the OTLP/HTTP JSON protocol
 * (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json) and keeps every span.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    void readBody(req).then((body) => {
      spans.push(...flatten(JSON.parse(body) as OtlpExport));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    waitFor: (accept, what, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!accept(spans)) return;
          done();
          resolve(spans);
        };
        const timer = setTimeout(() => {
          done();
          const names = [...new Set(spans.map((s) => s.name))].join(', ');
          reject(new Error(`timed out waiting for ${what}; spans received: ${names}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function flatten(body: OtlpExport): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs) => {
    const resource = attributeMap(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        name: span.name,
        kind: span.kind,
        attributes: attributeMap(span.attributes),
        resource,
      })),
    );
  });
}

/** `[{key, value: {stringValue: 'x'}}]` → `{key: 'x'}` (int values arrive as numbers or strings). */
function attributeMap(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  const map: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    const [kind, raw] = Object.entries(value)[0] ?? [];
    map[key] = kind === 'intValue' ? Number(raw) : raw;
  }
  return map;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}
