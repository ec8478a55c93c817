import type { NextFunction, Request, Response } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { buildProblem } from '../../common/errors/problem';
import { listen, Listener } from '../../common/http-listener';
import { requestIdFor } from '../../common/request-id';
import type { AmbientMetrics } from './ambient-metrics';

export const METRICS_PATH = '/metrics';

async function answer(metrics: AmbientMetrics, res: ServerResponse): Promise<void> {
  try {
    const text = await metrics.scrape();
    res.writeHead(200, { 'Content-Type': metrics.contentType }).end(text);
  } catch (err) {
    res
      .writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' })
      .end(`metrics unavailable: ${(err as Error).message}\n`);
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether the request carries `Authorization: Bearer <token>` (compared in constant time). */
function hasMetricsToken(req: IncomingMessage, token: string): boolean {
  const sent = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  return sent !== undefined && timingSafeEqual(digest(sent), digest(token));
}

/** 401 with the Oz Error body, as the API answers a missing key. */
function refuse(req: IncomingMessage, res: ServerResponse): void {
  const problem = buildProblem({
    code: 'authentication_required',
    title: 'Authentication required',
    status: 401,
    detail: 'send the metrics token (AMBIENT_METRICS_TOKEN) as "Authorization: Bearer <token>"',
    instance: METRICS_PATH,
    retryable: false,
    traceId: requestIdFor(req.headers),
  });
  res
    .writeHead(401, {
      'Content-Type': 'application/problem+json',
      'WWW-Authenticate': 'Bearer realm="metrics"',
    })
    .end(JSON.stringify(problem));
}

function serve(
  metrics: AmbientMetrics,
  token: string | undefined,
  req: IncomingMessage,
  res: ServerResponse,
) {
  if (token !== undefined && !hasMetricsToken(req, token)) return refuse(req, res);
  void answer(metrics, res);
}

/**
 * `GET /metrics` on the API's own server, only when AMBIENT_METRICS_TOKEN is set (and then only
 * with it): an Express handler in front of Nest's router, so the OpenAPI document never sees it.
 */
export function metricsRoute(metrics: AmbientMetrics, token: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.path !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) {
      return next();
    }
    res.locals.metricsRoute = METRICS_PATH;
    serve(metrics, token, req, res);
  };
}

/**
 * The metrics listener of AMBIENT_METRICS_PORT: `GET /metrics`, nothing else; with a token set,
 * only for scrapers that send it.
 */
export async function startMetricsServer(
  metrics: AmbientMetrics,
  settings: { port: number; host: string; token?: string },
): Promise<Listener> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== METRICS_PATH) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
    } else {
      serve(metrics, settings.token, req, res);
    }
  });
  const listener = await listen(server, settings.host, settings.port).catch((err: Error) => {
    throw new Error(
      `AMBIENT_METRICS_PORT: cannot listen on ${settings.host}:${settings.port} (${err.message}; ` +
        'another process may hold it: set another port, or off)',
    );
  });
  return { ...listener, url: `${listener.url}${METRICS_PATH}` };
}
