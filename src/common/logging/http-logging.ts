import type { NextFunction, Request, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { requestIdOf } from '../request-id';
import { withLogBindings } from './log-bindings';

/** A webhook's url_token travels in its path: never written to a log. */
const URL_TOKEN_PATH = /^(\/webhooks\/w\/[^/]+)\/.+$/;

/** The path a log line shows: no query string (signed URLs), no webhook url token. */
export function loggedPath(url: string | undefined): string {
  const path = (url ?? '').split('?')[0];
  return path.replace(URL_TOKEN_PATH, '$1/[token]');
}

/**
 * One JSON line per finished request (method, path, status, duration, request_id), and the
 * request's id bound to every line logged while it is handled. Runs after requestIdMiddleware.
 */
export function httpLoggingMiddleware(logger: Logger) {
  const log = pinoHttp({
    logger,
    genReqId: (req, res) => requestIdOf(res as unknown as Response) ?? '',
    customAttributeKeys: { reqId: 'request_id', responseTime: 'duration_ms' },
    quietReqLogger: true,
    wrapSerializers: false,
    serializers: {
      req: (req: IncomingMessage & { originalUrl?: string }) => ({
        method: req.method,
        path: loggedPath(req.originalUrl ?? req.url),
      }),
      res: (res: ServerResponse) => ({ status_code: res.statusCode }),
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
  });
  return (req: Request, res: Response, next: NextFunction): void => {
    log(req, res);
    withLogBindings({ request_id: requestIdOf(res) ?? '' }, next);
  };
}
