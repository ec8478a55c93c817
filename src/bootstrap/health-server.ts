import { createServer, ServerResponse } from 'node:http';
import { buildProblem } from '../common/errors/problem';
import { listen, Listener } from '../common/http-listener';
import type { HealthAnswer, Readiness } from '../modules/health/readiness.service';

const ROUTES: Partial<Record<string, (readiness: Readiness) => Promise<HealthAnswer>>> = {
  '/api/v1/health/live': (readiness) => readiness.live(),
  '/api/v1/health/ready': (readiness) => readiness.ready(),
};

/**
 * The probes of a process without the api role (worker, scheduler), which has no HTTP server
 * otherwise: the api's two health paths on AMBIENT_HEALTH_PORT, and nothing else.
 */
export async function startHealthServer(
  readiness: Readiness,
  host: string,
  port: number,
): Promise<Listener> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const route = ROUTES[path];
    if (!route || (req.method !== 'GET' && req.method !== 'HEAD')) {
      const status = route ? 405 : 404;
      const problem = buildProblem({
        code: route ? 'invalid_request' : 'resource_not_found',
        title: route ? 'Method not allowed' : 'Not found',
        status,
        detail: `this port serves only GET ${Object.keys(ROUTES).join(' and GET ')}`,
        instance: path,
      });
      reply(res, status, problem, 'application/problem+json');
      return;
    }
    route(readiness).then(
      (answer) => reply(res, answer.statusCode, answer.body),
      (err: Error) => reply(res, 500, { status: 'error', details: {}, message: err.message }),
    );
  });
  return listen(server, host, port);
}

function reply(res: ServerResponse, status: number, body: unknown, type = 'application/json') {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
  res.end(res.req.method === 'HEAD' ? undefined : text);
}
