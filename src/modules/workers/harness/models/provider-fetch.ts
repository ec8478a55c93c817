import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import {
  fetchAnswer,
  OutgoingRequest,
  redirectedRequest,
  REDIRECT_STATUSES,
} from '../../../../common/http/fetch-response';

export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** The agents a provider fetch sends through, by protocol. */
export interface ProviderAgents {
  'http:': HttpAgent;
  'https:': HttpsAgent;
}

/**
 * The provider SDKs' fetch: a request with a plain body (what both SDKs send for a completion,
 * never streamed here) goes over node:http or node:https with a kept-alive agent, and its whole
 * answer is read into the Response; anything else goes to the global fetch. The global fetch
 * (undici, its answer a web stream) cost 20–40 % more CPU per model call (docs/PERFORMANCE.md,
 * `bench:model-calls`), and every turn of every run makes one.
 * - A redirect is followed as the egress guard's fetch follows one: within the provider's origin
 *   only, so its key reaches no other; one not followed is answered as is (the SDK's APIError
 *   with that status, not retried).
 * - Failures reject as fetch's do: a TypeError "fetch failed" with the cause, or the abort's
 *   reason (the SDK's timeout included, also while the answer's body arrives). An answer cut off
 *   mid-body is such a failure, which the SDK retries as a connection error.
 * - No `accept-encoding` is sent (fetch sends gzip and deflate): answers of a few kilobytes are
 *   cheaper to read than to inflate; an encoded answer is still decoded.
 */
export function makeProviderFetch(agents: ProviderAgents): Fetch {
  return async (input, init = {}) => {
    const { body } = init;
    const plain =
      body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
    let url = input instanceof Request || !plain ? null : new URL(input);
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return fetch(input, init);
    init.signal?.throwIfAborted();
    let outgoing: OutgoingRequest = {
      method: (init.method ?? 'GET').toUpperCase(),
      headers: new Headers(init.headers),
      body: (body as string | Uint8Array | null | undefined) ?? null,
    };
    for (let hop = 0; ; hop++) {
      const res = await send(url, outgoing, init.signal, agents);
      const status = res.statusCode ?? 0;
      if (!REDIRECT_STATUSES.has(status) || init.redirect === 'manual') {
        return bufferedResponse(res, outgoing.method, url, init.signal);
      }
      const redirect = { status, location: res.headers.location ?? null, hop, mode: init.redirect };
      let next: ReturnType<typeof redirectedRequest>;
      try {
        next = redirectedRequest(redirect, url, outgoing, () => NOT_FOLLOWED);
      } catch (err) {
        // Not followed: the redirect is the answer, its body read as any other's.
        if (err === NOT_FOLLOWED) return bufferedResponse(res, outgoing.method, url, init.signal);
        res.resume();
        throw err;
      }
      res.resume();
      ({ url, outgoing } = next);
    }
  };
}

const NOT_FOLLOWED = new Error('redirect not followed');

/**
 * How long a connection may idle in the pool, as undici keeps them: a server closes its idle
 * connections after a few seconds (uvicorn, before vLLM, after 5), and a request sent on one it
 * just closed fails. A shorter `Keep-Alive: timeout` the server sends is kept instead.
 */
export const IDLE_CONNECTION_MS = 4000;

/** Connections to the operator's providers, kept open between the turns of every run here. */
export const providerFetch = makeProviderFetch({
  'http:': new HttpAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
  'https:': new HttpsAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
});

/**
 * `sendOnce`, and again once when a pooled connection turned out closed by the server before any
 * answer (the race between its idle close and this request, which the idle limit narrows).
 */
async function send(
  url: URL,
  outgoing: OutgoingRequest,
  signal: AbortSignal | null | undefined,
  agents: ProviderAgents,
): Promise<IncomingMessage> {
  try {
    return await sendOnce(url, outgoing, signal, agents);
  } catch (err) {
    if (!(err instanceof ReusedConnectionClosed)) throw err;
    return sendOnce(url, outgoing, signal, agents, false);
  }
}

class ReusedConnectionClosed extends TypeError {}

function sendOnce(
  url: URL,
  { method, headers: sent, body }: OutgoingRequest,
  signal: AbortSignal | null | undefined,
  agents: ProviderAgents,
  mayResend = true,
): Promise<IncomingMessage> {
  const headers: Record<string, string> = Object.fromEntries(sent);
  if (body !== null) headers['content-length'] = String(Buffer.byteLength(body));
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method,
      headers,
      agent: agents[url.protocol as keyof ProviderAgents],
      signal: signal ?? undefined,
    });
    req.once('response', resolve);
    req.once('error', (err: NodeJS.ErrnoException) => {
      const closedUnderUs =
        mayResend &&
        req.reusedSocket &&
        !signal?.aborted &&
        (err.code === 'ECONNRESET' || err.code === 'EPIPE');
      reject(
        closedUnderUs
          ? new ReusedConnectionClosed('fetch failed', { cause: err })
          : fetchError(err, signal),
      );
    });
    req.end(body ?? undefined);
  });
}

async function bufferedResponse(
  res: IncomingMessage,
  method: string,
  url: URL,
  signal: AbortSignal | null | undefined,
): Promise<Response> {
  const { status, headers, body } = fetchAnswer(res, method);
  const content = body && (await readAll(body, signal));
  const response = new Response(content, { status, statusText: res.statusMessage, headers });
  Object.defineProperty(response, 'url', { value: url.href });
  return response;
}

function readAll(stream: Readable, signal: AbortSignal | null | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('end', () => resolve(Buffer.concat(chunks)));
    stream.once('error', (err) => reject(fetchError(err, signal)));
  });
}

/**
 * An abort (the caller's, or the SDK's timeout) rejects with the signal's reason, the AbortError
 * the SDKs tell a timeout by, also when it cut the answer's body; anything else is fetch's
 * "fetch failed" with the cause.
 */
function fetchError(err: Error, signal: AbortSignal | null | undefined): unknown {
  if (signal?.aborted) return signal.reason;
  return err.name === 'AbortError' ? err : new TypeError('fetch failed', { cause: err });
}
