import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import {
  fetchAnswer,
  OutgoingRequest,
  redirectedRequest,
  REDIRECT_STATUSES,
} from '../http/fetch-response';
import { EgressGuard, EgressRefusedError, pinnedLookup } from './egress-guard';

export type GuardedFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A `fetch` whose every connection goes through `guard`: the name is resolved and checked once
 * and the socket connects to that address; only http and https; a redirect is followed (at most
 * MAX_REDIRECTS, each checked again) only within the request's origin, so the headers the tenant
 * configured for a server never reach another one. `redirect: 'manual'` returns redirects as is.
 */
export function guardedFetch(guard: EgressGuard): GuardedFetch {
  return async (input, init = {}) => {
    init.signal?.throwIfAborted();
    let url = new URL(input);
    let outgoing = await outgoingRequest(init);
    for (let hop = 0; ; hop++) {
      const response = await send(guard, url, outgoing, init.signal ?? undefined);
      if (!REDIRECT_STATUSES.has(response.status) || init.redirect === 'manual') return response;
      await response.body?.cancel();
      const redirect = {
        status: response.status,
        location: response.headers.get('location'),
        hop,
        mode: init.redirect,
      };
      ({ url, outgoing } = redirectedRequest(
        redirect,
        url,
        outgoing,
        (reason) => new EgressRefusedError(`egress refused: ${reason}`),
      ));
    }
  };
}

async function outgoingRequest(init: RequestInit): Promise<OutgoingRequest> {
  const headers = new Headers(init.headers);
  const method = (init.method ?? 'GET').toUpperCase();
  if (init.body === undefined || init.body === null) return { method, headers, body: null };
  // A Response reads every body form fetch accepts (string, bytes, Blob, form data, stream).
  const wrapped = new Response(init.body);
  const type = wrapped.headers.get('content-type');
  if (type && !headers.has('content-type')) headers.set('content-type', type);
  return { method, headers, body: Buffer.from(await wrapped.arrayBuffer()) };
}

async function send(
  guard: EgressGuard,
  url: URL,
  outgoing: OutgoingRequest,
  signal: AbortSignal | undefined,
): Promise<Response> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EgressRefusedError(
      `egress refused: ${url.protocol.replace(/:$/, '')} URLs are not allowed (http and https only)`,
    );
  }
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const target = await guard.check(url.hostname, port);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers: Record<string, string> = Object.fromEntries(outgoing.headers);
  if (outgoing.body) headers['content-length'] = String(outgoing.body.length);
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(url, {
      method: outgoing.method,
      headers,
      lookup: pinnedLookup(target),
      // A fresh agent: no pooled socket another code path opened (unchecked) is ever reused.
      agent: false,
      signal,
    });
    req.once('response', resolve);
    req.once('error', reject);
    req.end(outgoing.body ?? undefined);
  });
  return toResponse(response, outgoing.method);
}

function toResponse(res: IncomingMessage, method: string): Response {
  const { status, headers, body } = fetchAnswer(res, method);
  const stream = body && (Readable.toWeb(body) as ReadableStream<Uint8Array>);
  return new Response(stream, { status, statusText: res.statusMessage, headers });
}
