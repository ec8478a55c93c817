import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { EgressAllowList } from './egress-allow-list';
import { EgressGuard, type Resolver } from './egress-guard';
import { MAX_REDIRECTS } from '../http/fetch-response';
import { guardedFetch } from './guarded-fetch';

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

describe('guardedFetch', () => {
  let server: Server;
  let other: Server;
  let base: string;
  let otherBase: string;
  const seen: Seen[] = [];
  const allowLoopback = EgressGuard.fromSetting('127.0.0.1');

  const start = (handler: Parameters<typeof createServer>[1]) =>
    new Promise<{ server: Server; base: string }>((resolve) => {
      const s = createServer(handler);
      s.listen(0, '127.0.0.1', () =>
        resolve({ server: s, base: `http://127.0.0.1:${(s.address() as AddressInfo).port}` }),
      );
    });

  beforeAll(async () => {
    ({ server, base } = await start((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        seen.push({
          method: req.method ?? '',
          path,
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        });
        const hops = /^\/hops\/(\d+)$/.exec(path);
        if (hops) {
          const left = Number(hops[1]);
          if (left === 0) return res.end('arrived');
          return res.writeHead(307, { location: `/hops/${left - 1}` }).end();
        }
        if (path === '/see-other') return res.writeHead(303, { location: '/hops/0' }).end();
        if (path === '/elsewhere') {
          return res.writeHead(302, { location: `${otherBase}/stolen` }).end('internal body');
        }
        if (path === '/gzip') {
          return res
            .writeHead(200, { 'content-encoding': 'gzip' })
            .end(gzipSync(Buffer.from('unzipped')));
        }
        res.writeHead(200, { 'content-type': 'text/plain', 'x-one': 'a' }).end('ok');
      });
    }));
    ({ server: other, base: otherBase } = await start((req, res) => {
      seen.push({ method: req.method ?? '', path: `other:${req.url}`, headers: {}, body: '' });
      res.end('other');
    }));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await new Promise((resolve) => other.close(resolve));
  });
  beforeEach(() => {
    seen.length = 0;
  });

  it('sends the method, headers and body, and streams the answer back', async () => {
    const fetch = guardedFetch(allowLoopback);
    const response = await fetch(`${base}/echo`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-one')).toBe('a');
    expect(await response.text()).toBe('ok');
    expect(seen).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/echo',
        body: '{"a":1}',
        headers: expect.objectContaining({ 'x-api-key': 'k', 'content-length': '7' }),
      }),
    ]);
  });

  it('decodes a gzip body', async () => {
    expect(await (await guardedFetch(allowLoopback)(`${base}/gzip`)).text()).toBe('unzipped');
  });

  it(`follows up to ${MAX_REDIRECTS} redirects within the origin, and refuses the next`, async () => {
    const fetch = guardedFetch(allowLoopback);
    expect(await (await fetch(`${base}/hops/${MAX_REDIRECTS}`)).text()).toBe('arrived');
    seen.length = 0;
    await expect(fetch(`${base}/hops/${MAX_REDIRECTS + 1}`)).rejects.toThrow(
      `egress refused: more than ${MAX_REDIRECTS} redirects`,
    );
    expect(seen).toHaveLength(MAX_REDIRECTS + 1);
  });

  it('turns a POST answered 303 into a GET without the body', async () => {
    const response = await guardedFetch(allowLoopback)(`${base}/see-other`, {
      method: 'POST',
      body: 'payload',
    });
    expect(await response.text()).toBe('arrived');
    expect(seen.map((s) => [s.method, s.body])).toEqual([
      ['POST', 'payload'],
      ['GET', ''],
    ]);
  });

  it('never follows a redirect to another origin, and does not quote its body', async () => {
    const failure = guardedFetch(allowLoopback)(`${base}/elsewhere`, {
      headers: { authorization: 'Bearer tenant-token' },
    });
    await expect(failure).rejects.toThrow(
      'egress refused: a redirect to another origin is not followed',
    );
    expect(seen.map((s) => s.path)).toEqual(['/elsewhere']);
  });

  it('returns redirects as they are with redirect: manual', async () => {
    const response = await guardedFetch(allowLoopback)(`${base}/hops/1`, { redirect: 'manual' });
    expect(response.status).toBe(307);
    expect(response.headers.get('location')).toBe('/hops/0');
  });

  it('checks every hop again (a name rebound between hops is refused)', async () => {
    const { port } = new URL(base);
    let calls = 0;
    const rebinding: Resolver = () =>
      Promise.resolve([{ address: calls++ === 0 ? '127.0.0.1' : '10.0.0.1', family: 4 }]);
    const guard = new EgressGuard(EgressAllowList.parse('127.0.0.1'), rebinding);
    await expect(guardedFetch(guard)(`http://rebind.test:${port}/hops/1`)).rejects.toThrow(
      'egress refused: rebind.test resolves to a private address (AMBIENT_EGRESS_ALLOW)',
    );
    expect(seen.map((s) => s.path)).toEqual(['/hops/1']);
  });

  it('refuses other schemes and refused addresses before any connection', async () => {
    const fetch = guardedFetch(new EgressGuard());
    await expect(fetch('file:///etc/passwd')).rejects.toThrow(
      'egress refused: file URLs are not allowed (http and https only)',
    );
    await expect(fetch(`${base}/echo`)).rejects.toThrow(
      'egress refused: 127.0.0.1 is a loopback address (AMBIENT_EGRESS_ALLOW)',
    );
    await expect(fetch('http://[::1]:9/')).rejects.toThrow(
      'egress refused: ::1 is a loopback address',
    );
    expect(seen).toEqual([]);
  });

  it('stops when its signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      guardedFetch(allowLoopback)(`${base}/echo`, { signal: controller.signal }),
    ).rejects.toThrow();
    expect(seen).toEqual([]);
  });
});
