import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { logRequest } from '../../common/logging/http-logging';
import { requestIdOf } from '../../common/request-id';
import type { AmbientMetrics } from './ambient-metrics';
import { routeLabel } from './route-label';

/**
 * After requestIdMiddleware: times the request to its end, records it under its route template
 * and writes its log line (every line logged meanwhile carries the request id: see
 * currentLogBindings). One listener per request does both.
 */
export function httpObservationMiddleware(metrics: AmbientMetrics, logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = process.hrtime.bigint();
    const requestId = requestIdOf(res) ?? '';
    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const finished = res.writableFinished;
      // A live stream lasts as long as its client watches: not a request duration.
      const stream = String(res.getHeader('content-type') ?? '').startsWith('text/event-stream');
      if (finished && !stream) {
        metrics.httpRequest(req.method, routeLabel(req, res.locals), res.statusCode, seconds);
      }
      logRequest(logger, req, res.statusCode, requestId, seconds, finished);
    });
    next();
  };
}
