import type { Request, Response } from 'express';
import { ErrorCode } from '../common/errors/error-codes';
import { buildProblem } from '../common/errors/problem';
import { requestIdOf } from '../common/request-id';

/** What a refused body may still send after the answer before its connection is cut. */
const LINGER_BYTES = 1024 * 1024;
/** ... and how long it may take to stop before its connection is cut anyway. */
const LINGER_MS = 5_000;

/**
 * Answers with the Oz Error model, as the API does. A refusal may go out before the body was read
 * (404, 401, 413 …): then the connection is closed rather than drained (`closeAfterAnswer`).
 */
export function sendProblem(
  res: Response,
  status: number,
  code: ErrorCode,
  detail: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const problem = buildProblem({
    code,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    instance: res.req?.originalUrl
      ?.split('?')[0]
      ?.replace(/(\/webhooks\/w\/[^/]+)\/.+$/, '$1/{token}'),
    retryable: status === 429 || status === 503,
    traceId: requestIdOf(res),
  });
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (res.req && !res.req.complete) closeAfterAnswer(res.req, res);
  res.status(status).type('application/problem+json').send(JSON.stringify(problem));
}

/** Straight to Node's response: Express's `send` (charset, ETag, freshness) has nothing to do here. */
export function sendAccepted(res: Response, deliveryId: string): void {
  const body = JSON.stringify({ delivery_id: deliveryId });
  res.statusCode = 202;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

const TITLES: Record<number, string> = {
  400: 'Invalid request',
  401: 'Authentication required',
  404: 'Resource not found',
  405: 'Method not allowed',
  413: 'Payload too large',
  429: 'Too many requests',
  503: 'Service temporarily unavailable',
};

/**
 * For an answer sent before the body was read to its end: `Connection: close`, then the socket
 * goes. Left alone, Node would keep reading (and discarding) the body after the answer, for as
 * long as a chunked sender keeps writing. Closing at once would not do either: closing a socket
 * with unread data sends a reset, and a sender still writing then sees that error instead of
 * the answer. So after the answer (and Node's FIN) the rest is discarded until the sender stops,
 * has sent LINGER_BYTES more or LINGER_MS have passed, and then the socket is destroyed.
 */
function closeAfterAnswer(req: Request, res: Response): void {
  res.setHeader('Connection', 'close');
  res.once('finish', () => {
    const socket = req.socket;
    // Node's Connection: close handling destroys the socket as soon as its FIN is out.
    socket.removeListener('finish', socket.destroy);
    const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once('close', () => clearTimeout(timer));
    let more = 0;
    req.on('data', (chunk: Buffer) => {
      more += chunk.length;
      if (more > LINGER_BYTES) socket.destroy();
    });
    req.once('end', () => socket.destroy());
    req.resume();
  });
}
