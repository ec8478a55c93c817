import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { IncomingMessage } from 'node:http';
import { NodeSDK, resources } from '@opentelemetry/sdk-node';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { MySQL2Instrumentation } from '@opentelemetry/instrumentation-mysql2';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import type { Span } from '@opentelemetry/api';
import { loggedPath } from '../common/logging/http-logging';
import type { Role } from '../config/app-config';

/** Probes and scrapes would otherwise fill the traces with one-span noise. */
const UNTRACED_PATHS = /^\/(api\/v1\/health(\/live|\/ready)?|health|metrics)(\?|$)/;

/**
 * The OpenTelemetry Node SDK with the instrumentations Ambient's stack needs. The exporter, its
 * protocol, sampler and batch delays come from the standard OTEL_* variables. Returns what
 * tracing.ts calls `Tracing` (loaded lazily from there, so this file does not import it).
 */
export function startTracingSdk(
  roles: Role[],
  env: NodeJS.ProcessEnv,
): { shutdown(): Promise<void> } {
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || 'ambient',
    resource: resources.resourceFromAttributes({
      'service.version': ambientVersion(),
      'service.instance.id': `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
      'ambient.roles': roles.join(','),
    }),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.test(req.url ?? ''),
        requestHook: (span, request) => {
          if (request instanceof IncomingMessage) redactServerPath(span, request);
        },
      }),
      new ExpressInstrumentation(),
      // Statements only, never their values (prompts, key hashes, encrypted secrets).
      new MySQL2Instrumentation({ maskStatement: true }),
      // Bull's blocking polls outside any trace would each be a trace of their own.
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  // @nestjs/platform-express is an ES module: its `import express` passes no require hook, so
  // express is required (and patched) here first, and that import then finds this instance.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('express');
  return { shutdown: () => sdk.shutdown() };
}

/**
 * A request path can carry a credential (a webhook url token, an environment share token) and its
 * query a signed URL's signature: a span shows what the request log shows (`loggedPath`).
 */
function redactServerPath(span: Span, request: IncomingMessage): void {
  const url = request.url ?? '';
  span.setAttribute('url.path', loggedPath(url));
  if (url.includes('?')) span.setAttribute('url.query', '[redacted]');
}

function ambientVersion(): string {
  // src/bootstrap from the sources, dist/src/bootstrap from the build.
  for (let dir = __dirname, i = 0; i < 4; i++, dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'ambient' && pkg.version) return pkg.version;
    }
  }
  return 'unknown';
}
