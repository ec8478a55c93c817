import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';

/** A webhook's url_token travels in its path: never written to a log. */
const URL_TOKEN_PATH = /^(\/webhooks\/w\/[^/]+)\/.+$/;

/** The path a log line shows: no query string (signed URLs), no webhook url token. */
export function loggedPath(url: string | undefined): string {
  const path = (url ?? '').split('?')[0];
  return path.replace(URL_TOKEN_PATH, '$1/[token]');
}

/**
 * The one line of a finished request: method, path, status, duration and request_id (5xx at
 * error). Written directly with flat fields, no child logger per request: it is on every request's
 * path.
 */
export function logRequest(
  logger: Logger,
  req: IncomingMessage & { originalUrl?: string },
  statusCode: number,
  requestId: string,
  seconds: number,
  finished: boolean,
): void {
  const level = statusCode >= 500 ? 'error' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  logger[level](
    {
      request_id: requestId,
      method: req.method,
      path: loggedPath(req.originalUrl ?? req.url),
      status_code: statusCode,
      duration_ms: Math.round(seconds * 1e4) / 10,
    },
    finished ? 'request completed' : 'request aborted',
  );
}
