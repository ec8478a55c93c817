import type { NextFunction, Request, Response } from 'express';
import type { AmbientMetrics } from './ambient-metrics';
import { routeLabel } from './route-label';

/** Times every request to its end and records it under its route template. */
export function httpMetricsMiddleware(metrics: AmbientMetrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      metrics.httpRequest(req.method, routeLabel(req, res.locals), res.statusCode, seconds);
    });
    next();
  };
}
