import type { IncomingMessage } from 'node:http';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** What the fetch helpers built on node:http share. */

export const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Statuses whose answer has no body (a Response refuses one). */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * What a fetch answer is made of: its status, or a TypeError (as fetch's) when a Response cannot
 * carry it; its headers as sent, repeated ones appended; and its body, decoded as fetch decodes
 * one (gzip, deflate, br; the encoding's headers then dropped), or null for an answer without
 * one (HEAD, 204, 205, 304), whose rest is drained.
 */
export function fetchAnswer(
  res: IncomingMessage,
  method: string,
): { status: number; headers: Headers; body: Readable | null } {
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 599) {
    res.destroy();
    throw new TypeError(`fetch failed: unexpected HTTP status ${status}`);
  }
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    headers.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
  }
  if (method === 'HEAD' || NULL_BODY_STATUSES.has(status)) {
    res.resume();
    return { status, headers, body: null };
  }
  const decoder = decoderFor(headers.get('content-encoding'));
  if (!decoder) return { status, headers, body: res };
  res.once('error', (err) => decoder.destroy(err));
  headers.delete('content-encoding');
  headers.delete('content-length');
  return { status, headers, body: res.pipe(decoder) };
}

function decoderFor(encoding: string | null): Transform | null {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return null;
  }
}

/** Redirects one request may follow. */
export const MAX_REDIRECTS = 3;

/** A request as the node:http fetches send it. */
export interface OutgoingRequest {
  method: string;
  headers: Headers;
  body: string | Uint8Array | null;
}

/**
 * The request that follows a redirect answer (`status`, `location`) to `outgoing` sent to `from`,
 * under the rules both node:http fetches keep: within the request's origin only, so that the
 * headers (keys) meant for one server never reach another, and at most MAX_REDIRECTS; fetch's
 * method rules (303, and 301 or 302 after a POST, become a GET without a body). `refuse` makes
 * the error for a redirect not followed; `redirect: 'error'` is fetch's TypeError.
 */
export function redirectedRequest(
  redirect: {
    status: number;
    location: string | null;
    hop: number;
    mode?: RequestInit['redirect'];
  },
  from: URL,
  outgoing: OutgoingRequest,
  refuse: (message: string) => Error,
): { url: URL; outgoing: OutgoingRequest } {
  if (redirect.mode === 'error') throw new TypeError('fetch failed: redirect (redirect: error)');
  if (!redirect.location) throw new TypeError('fetch failed: a redirect without Location');
  const url = new URL(redirect.location, from);
  if (url.origin !== from.origin) {
    throw refuse('a redirect to another origin is not followed');
  }
  if (redirect.hop >= MAX_REDIRECTS) throw refuse(`more than ${MAX_REDIRECTS} redirects`);
  const { status } = redirect;
  const turnsIntoGet =
    status === 303 || ((status === 301 || status === 302) && outgoing.method === 'POST');
  if (!turnsIntoGet || outgoing.method === 'HEAD') return { url, outgoing };
  const headers = new Headers(outgoing.headers);
  for (const name of ['content-type', 'content-length', 'content-encoding']) headers.delete(name);
  return { url, outgoing: { method: 'GET', headers, body: null } };
}
