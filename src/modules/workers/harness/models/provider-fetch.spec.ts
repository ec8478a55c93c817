import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import {
  Agent as HttpAgent,
  createServer,
  IncomingMessage,
  Server,
  ServerResponse,
} from 'node:http';
import {
  Agent as HttpsAgent,
  createServer as createHttpsServer,
  Server as HttpsServer,
} from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { serverCertificateFor } from '../../../../../test/support/test-certificates';
import type { ProviderEndpoint } from '../../../models';
import { AnthropicMessagesClient } from './anthropic-messages-client';
import { ModelCallError } from './model-client';
import { OpenAiChatClient } from './openai-chat-client';
import { makeProviderFetch, providerFetch } from './provider-fetch';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

async function serve(
  server: Server | HttpsServer,
  handler: Handler,
  scheme = 'http',
): Promise<{ base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('providerFetch', () => {
  let server: Server;
  let connections: number;

  beforeEach(() => {
    server = createServer();
    connections = 0;
    server.on('connection', () => connections++);
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends the method, headers and body, and answers with the status, headers and body sent', async () => {
    const { base, seen } = await serve(server, (_req, res) => {
      res.writeHead(201, 'Made', [
        ['content-type', 'application/json'],
        ['x-request-id', 'req-1'],
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ]);
      res.end(JSON.stringify({ id: 'c1', ok: true }));
    });
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'héllo' }] });
    const response = await providerFetch(`${base}/v1/chat/completions`, {
      method: 'post',
      headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      body,
    });
    expect(response.status).toBe(201);
    expect(response.statusText).toBe('Made');
    expect(response.url).toBe(`${base}/v1/chat/completions`);
    expect(response.headers.get('x-request-id')).toBe('req-1');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.json()).toEqual({ id: 'c1', ok: true });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/chat/completions', body });
    expect(seen[0].headers).toMatchObject({
      authorization: 'Bearer k',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
    });
  });

  it('keeps the connection open for the next call', async () => {
    const { base } = await serve(server, (_req, res) => res.end('{}'));
    for (let i = 0; i < 3; i++) {
      const response = await providerFetch(`${base}/v1/x`, { method: 'POST', body: '{}' });
      expect(await response.text()).toBe('{}');
    }
    expect(connections).toBe(1);
  });

  it('sends again, once, what a pooled connection the server closed did not answer', async () => {
    let answered = 0;
    const { base, seen } = await serve(server, (req, res) => {
      // The second request on the first connection finds it closed, as after the server's idle close.
      if (answered === 1 && seen.length === 2) return req.socket.destroy();
      answered++;
      res.end(`answer ${answered}`);
    });
    expect(await (await providerFetch(`${base}/v1/x`, { method: 'POST', body: '1' })).text()).toBe(
      'answer 1',
    );
    expect(await (await providerFetch(`${base}/v1/x`, { method: 'POST', body: '2' })).text()).toBe(
      'answer 2',
    );
    expect(seen.map((s) => s.body)).toEqual(['1', '2', '2']);
    expect(connections).toBe(2);
  });

  it('decodes a gzip answer, as fetch does', async () => {
    const { base } = await serve(server, (_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
      res.end(gzipSync('{"text":"unzipped"}'));
    });
    const response = await providerFetch(`${base}/v1/x`);
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(await response.json()).toEqual({ text: 'unzipped' });
  });

  it('answers a 204 without a body', async () => {
    const { base } = await serve(server, (_req, res) => res.writeHead(204).end());
    const response = await providerFetch(`${base}/v1/x`, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it('follows a redirect within the origin as fetch does, and no other', async () => {
    const { base, seen } = await serve(server, (req, res) => {
      if (req.url === '/old') res.writeHead(307, { location: '/new' }).end();
      else if (req.url === '/see-other') res.writeHead(303, { location: '/new' }).end();
      else if (req.url === '/away') {
        res.writeHead(308, { location: 'http://127.0.0.2:1/x' }).end('moved elsewhere');
      } else res.end('moved here');
    });
    const post = { method: 'POST', body: 'payload', headers: { authorization: 'Bearer k' } };
    expect(await (await providerFetch(`${base}/old`, post)).text()).toBe('moved here');
    expect(await (await providerFetch(`${base}/see-other`, post)).text()).toBe('moved here');
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['POST', '/old', 'payload'],
      ['POST', '/new', 'payload'],
      ['POST', '/see-other', 'payload'],
      ['GET', '/new', ''],
    ]);
    // The key sent to the provider is never sent to another origin: the redirect is the answer
    // (the SDK's APIError with its status, which it does not retry).
    const away = await providerFetch(`${base}/away`, post);
    expect(away.status).toBe(308);
    expect(await away.text()).toBe('moved elsewhere');
    expect(seen).toHaveLength(5);
  });

  it('sends a streamed body through the global fetch', async () => {
    const { base, seen } = await serve(server, (_req, res) => res.end('ok'));
    const body = new Blob(['streamed']).stream();
    const response = await providerFetch(`${base}/v1/x`, {
      method: 'POST',
      body,
      duplex: 'half',
    } as RequestInit);
    expect(await response.text()).toBe('ok');
    expect(seen[0].body).toBe('streamed');
  });

  it('rejects a refused connection with fetch\'s "fetch failed" and the cause', async () => {
    const { base } = await serve(server, (_req, res) => res.end());
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    server = createServer(); // for afterEach
    server.listen(0);
    const failed = await providerFetch(`${base}/v1/x`).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(TypeError);
    expect((failed as TypeError).message).toBe('fetch failed');
    expect(((failed as TypeError).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });

  it('rejects with the abort reason when aborted before, or while the answer arrives', async () => {
    let closed!: Promise<void>;
    const { base } = await serve(server, (req, res) => {
      closed = new Promise((resolve) => res.once('close', () => resolve()));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
    });
    const before = new AbortController();
    before.abort();
    await expect(providerFetch(`${base}/v1/x`, { signal: before.signal })).rejects.toBe(
      before.signal.reason,
    );

    const during = new AbortController();
    const answer = providerFetch(`${base}/v1/x`, { signal: during.signal });
    await new Promise((resolve) => server.once('request', () => setImmediate(resolve)));
    during.abort();
    const failed = await answer.catch((err: unknown) => err);
    expect(failed).toBe(during.signal.reason);
    expect((failed as Error).name).toBe('AbortError');
    await closed; // the server saw the request go away
  });

  it('speaks https through its agent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ambient-provider-fetch-'));
    try {
      const { caFile, key, cert } = serverCertificateFor(dir, ['127.0.0.1']);
      const tls = createHttpsServer({ key, cert });
      const { base } = await serve(tls, (_req, res) => res.end('{"tls":true}'), 'https');
      const fetchTls = makeProviderFetch({
        'http:': new HttpAgent(),
        'https:': new HttpsAgent({ keepAlive: true, ca: readFileSync(caFile) }),
      });
      try {
        const response = await fetchTls(`${base}/v1/x`, { method: 'POST', body: '{}' });
        expect(await response.json()).toEqual({ tls: true });
        // The agent checks the certificate: one the CA did not sign is refused.
        const untrusting = makeProviderFetch({
          'http:': new HttpAgent(),
          'https:': new HttpsAgent(),
        });
        const failed = await untrusting(`${base}/v1/x`).catch((err: unknown) => err);
        expect((failed as TypeError).message).toBe('fetch failed');
      } finally {
        tls.closeAllConnections();
        await new Promise((resolve) => tls.close(resolve));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the provider SDK clients', () => {
  let provider: Server;
  let elsewhere: Server;
  afterEach(async () => {
    for (const server of [provider, elsewhere]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.each(['chat_completions', 'anthropic_messages'] as const)(
    'send through the provider fetch (%s): a redirect to another origin never carries the key there',
    async (api) => {
      elsewhere = createServer();
      const other = await serve(elsewhere, (_req, res) => res.end('{}'));
      provider = createServer();
      await serve(provider, (req, res) =>
        res.writeHead(307, { location: `${other.base}${req.url}` }).end(),
      );
      const endpoint: ProviderEndpoint = {
        name: 'test',
        kind: api === 'anthropic_messages' ? 'ANTHROPIC' : 'OPENAI',
        api,
        baseUrl: `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`,
        apiKey: 'the-provider-key',
        apiKeyEnv: null,
      };
      const client =
        api === 'anthropic_messages'
          ? new AnthropicMessagesClient(endpoint)
          : new OpenAiChatClient(endpoint);
      const request = {
        model: 'm',
        messages: [{ role: 'user' as const, content: 'hi' }],
        tools: [],
        maxOutputTokens: 16,
      };
      const failed = await client
        .complete(request, new AbortController().signal)
        .catch((err: unknown) => err);
      // The global fetch follows it, with the Anthropic key's header among those sent on.
      expect(other.seen).toEqual([]);
      expect(failed).toBeInstanceOf(ModelCallError);
      expect((failed as ModelCallError).status).toBe(307);
    },
  );
});
