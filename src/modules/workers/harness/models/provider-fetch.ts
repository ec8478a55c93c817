import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import {
  decoderFor,
  fetchableStatus,
  NULL_BODY_STATUSES,
  OutgoingRequest,
  redirectedRequest,
  REDIRECT_STATUSES,
  responseHeaders,
} from '../../../../common/http/fetch-response';

export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** The agents a provider fetch sends through, by protocol. */
export interface ProviderAgents {
  'http:': HttpAgent;
  'https:': HttpsAgent;
}

/**
 * The provider SDKs' fetch: a request with a plain body (what both SDKs send for a completion)
 * goes over node:http or node:https with a kept-alive agent, and its whole answer is read into
 * the Response; anything else goes to the global fetch. A redirect is followed as the egress
 * guard's fetch follows one: within the provider's origin only, so its key reaches no other. The global fetch
 * (undici, its answer a web stream) cost twice the CPU per model call (docs/PERFORMANCE.md,
 * `bench:model-calls`), and every turn of every run makes one. Failures reject as fetch's do: a
 * TypeError "fetch failed" with the cause, or the abort's AbortError.
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
      res.resume();
      const redirect = { status, location: res.headers.location ?? null, hop, mode: init.redirect };
      ({ url, outgoing } = redirectedRequest(
        redirect,
        url,
        outgoing,
        (reason) => new TypeError(`fetch failed: ${reason}`),
      ));
    }
  };
}

/** Connections to the operator's providers, kept open between the turns of every run here. */
export const providerFetch = makeProviderFetch({
  'http:': new HttpAgent({ keepAlive: true }),
  'https:': new HttpsAgent({ keepAlive: true }),
});

function send(
  url: URL,
  { method, headers: sent, body }: OutgoingRequest,
  signal: AbortSignal | null | undefined,
  agents: ProviderAgents,
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
    req.once('error', (err) => reject(fetchError(err, signal)));
    req.end(body ?? undefined);
  });
}

async function bufferedResponse(
  res: IncomingMessage,
  method: string,
  url: URL,
  signal: AbortSignal | null | undefined,
): Promise<Response> {
  const status = fetchableStatus(res);
  const headers = responseHeaders(res);
  const init = { status, statusText: res.statusMessage, headers };
  let content: Buffer | null = null;
  if (method === 'HEAD' || NULL_BODY_STATUSES.has(status)) {
    res.resume();
  } else {
    const decoder = decoderFor(headers.get('content-encoding'));
    if (decoder) {
      res.once('error', (err) => decoder.destroy(err));
      headers.delete('content-encoding');
      headers.delete('content-length');
    }
    content = await readAll(decoder ? res.pipe(decoder) : res, signal);
  }
  const response = new Response(content, init);
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
