import type { NextFunction, Request, Response } from 'express';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { listen, Listener } from '../../common/http-listener';
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

/**
 * `GET /metrics` on the API's own server (AMBIENT_METRICS_PORT unset): an Express handler in
 * front of Nest's router, so neither the bearer guard nor the OpenAPI document sees it.
 */
export function metricsRoute(metrics: AmbientMetrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.path !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) {
      return next();
    }
    res.locals.metricsRoute = METRICS_PATH;
    void answer(metrics, res);
  };
}

/** The metrics listener of AMBIENT_METRICS_PORT: `GET /metrics`, nothing else. */
export async function startMetricsServer(
  metrics: AmbientMetrics,
  port: number,
  host: string,
): Promise<Listener> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== METRICS_PATH) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
    } else {
      void answer(metrics, res);
    }
  });
  const listener = await listen(server, host, port);
  return { ...listener, url: `${listener.url}${METRICS_PATH}` };
}
