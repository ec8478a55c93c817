import type { IncomingHttpHeaders } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { randomHex } from './ids';
import { withRequestContext } from './request-context';

/** The response header that names the request's id (also `trace_id` in every Error body). */
export const REQUEST_ID_HEADER = 'X-Request-Id';

/** What a caller's own `X-Request-Id` may look like to be kept (anything else gets a new id). */
const CALLER_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;
/** W3C `traceparent`: version-traceid-parentid-flags; an all-zero trace id is invalid. */
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The id of one HTTP request: the caller's `X-Request-Id` when it is sane, else the trace id of a
 * W3C `traceparent` header, else a new random id shaped like an OpenTelemetry trace id (32 hex).
 */
export function requestIdFor(headers: IncomingHttpHeaders): string {
  const own = headers['x-request-id'];
  if (typeof own === 'string' && CALLER_ID.test(own)) return own;
  const parent = headers.traceparent;
  const trace = typeof parent === 'string' ? TRACEPARENT.exec(parent.trim())?.[1] : undefined;
  if (trace && !/^0+$/.test(trace)) return trace;
  return randomHex(16);
}

/**
 * Express middleware: gives every request its id (`res.locals.requestId`) and the header, and
 * makes the id and the caller's address the current request context (the audit log's).
 */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const id = requestIdFor(req.headers);
  res.locals.requestId = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  withRequestContext({ requestId: id, ip: req.ip ?? req.socket.remoteAddress ?? null }, next);
}

/** The id the middleware gave this response's request (undefined outside Express's pipeline). */
export function requestIdOf(res: Response | undefined): string | undefined {
  const id: unknown = res?.locals?.requestId;
  return typeof id === 'string' ? id : undefined;
}
