import type { Request } from 'express';

/** The label of requests no route matched (404s, probes): never the raw path (cardinality). */
export const UNMATCHED_ROUTE = 'unmatched';

/** The catch-all Nest's Express adapter answers unknown paths with (its 404). */
const NOT_FOUND_ROUTE = '*path';

/**
 * The route template that answered the request (`/api/v1/agent/runs/:runId`), from Express's
 * matched route, or `res.locals.metricsRoute` set by a handler outside Nest's router.
 */
export function routeLabel(
  req: Pick<Request, 'route' | 'baseUrl'>,
  locals?: Record<string, unknown>,
): string {
  const fixed = locals?.metricsRoute;
  if (typeof fixed === 'string') return fixed;
  const path: unknown = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path !== 'string' || path === NOT_FOUND_ROUTE) return UNMATCHED_ROUTE;
  return `${req.baseUrl ?? ''}${path}` || '/';
}
