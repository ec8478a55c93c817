import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';

/** Credentials that travel in a path, and how a log shows it without them. */
const PATH_SECRETS: [RegExp, string][] = [
  // A webhook's url_token.
  [/^(\/webhooks\/w\/[^/]+)\/.+$/, '$1/[token]'],
  // An environment share token: whoever holds it adds the environment to their team.
  [/^(\/api\/v1\/agent\/environments\/shared)\/[^/]+/, '$1/[token]'],
  // An API key pasted into a path by mistake (`amb_<prefix>_<secret>`, any segment).
  [/(^|\/)amb_[^/]*/g, '$1[key]'],
];

/**
 * The path a log line, an error's log, an audit event or a trace shows: no query string (signed
 * URLs), no webhook url token, no environment share token, no API key. The one masking function
 * for paths: whatever records a path passes it through this.
 */
export function loggedPath(url: string | undefined): string {
  let path = (url ?? '').split('?')[0];
  for (const [pattern, replacement] of PATH_SECRETS) path = path.replace(pattern, replacement);
  return path;
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
