import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { EgressAllowList } from '../../../../common/egress/egress-allow-list';
import { EgressGuard, type Resolver } from '../../../../common/egress/egress-guard';
import type {
  BoundSecret,
  EgressDecision,
  EgressPolicy,
} from '../../../../common/egress/egress-policy';
import { parseEgressRules } from '../../../../common/egress/egress-rules';
import {
  connectThrough,
  plainThrough,
  readAnswer,
  requestOver,
  startUpstreams,
  tlsOver,
  type ProxyAnswer,
  type SeenRequest,
  type Upstreams,
} from '../../../../../test/support/egress-upstreams';
import { waitFor } from '../../../../../test/support/wait';
import { EgressProxy } from './egress-proxy';

/** Test names: `*.test` are the upstreams on 127.0.0.1; `inside.evil` points at a private address. */
const resolver: Resolver = (host) => {
  if (host.endsWith('.test')) return Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
  if (host === 'inside.evil') return Promise.resolve([{ address: '10.1.2.3', family: 4 }]);
  return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
};
/** As AMBIENT_EGRESS_ALLOW=127.0.0.1 would: the upstreams' loopback address, nothing else inside. */
const guard = new EgressGuard(EgressAllowList.parse('127.0.0.1'), resolver);

const TOKEN: BoundSecret = {
  name: 'GITHUB_TOKEN',
  placeholder: 'ambient-placeholder-GITHUB_TOKEN-7f3a',
  value: 'ghp_the-real-token',
  hosts: ['secret.test'],
};

let upstreams: Upstreams;
let dir: string;
let proxy: EgressProxy | undefined;

beforeAll(async () => {
  upstreams = await startUpstreams();
});
afterAll(() => upstreams.close());
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'egress-proxy-'));
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function startProxy(
  policy: Partial<EgressPolicy> & Pick<EgressPolicy, 'mode'>,
  decisions: EgressDecision[] = [],
  maxConnections?: number,
): Promise<string> {
  proxy = await EgressProxy.start({
    policy: { rules: [], secrets: [], ...policy },
    guard,
    onDecision: (d) => decisions.push(d),
    upstreamCa: [upstreams.ca.certPem],
    maxConnections,
  });
  const socketPath = join(dir, 'egress.sock');
  await proxy.listen(socketPath);
  return socketPath;
}

/** CONNECT, TLS trusting only `ca`, then the requests in turn over the one tunnel. */
async function httpsThrough(
  socketPath: string,
  host: string,
  ca: string[],
  ...requests: Parameters<typeof requestOver>[2][]
): Promise<ProxyAnswer[]> {
  const tunnel = await connectThrough(socketPath, `${host}:${upstreams.httpsPort}`);
  if (!('socket' in tunnel)) throw new Error(`refused: ${JSON.stringify(tunnel.refused)}`);
  const tls = await tlsOver(tunnel.socket, host, ca);
  const answers: ProxyAnswer[] = [];
  for (const spec of requests) answers.push(await requestOver(tls, host, spec));
  tls.destroy();
  return answers;
}

const seenBy = (answer: ProxyAnswer) => JSON.parse(answer.body) as SeenRequest;

describe('EgressProxy in allowlist mode', () => {
  it('tunnels an allowed host without interception (the upstream certificate reaches the client)', async () => {
    const decisions: EgressDecision[] = [];
    const socketPath = await startProxy(
      { mode: 'allowlist', rules: parseEgressRules([`allowed.test:${upstreams.httpsPort}`]) },
      decisions,
    );
    const [answer] = await httpsThrough(socketPath, 'allowed.test', [upstreams.ca.certPem], {
      path: '/hello',
    });
    expect(answer.status).toBe(200);
    expect(seenBy(answer)).toMatchObject({ method: 'GET', url: '/hello' });
    expect(decisions).toEqual([
      {
        host: 'allowed.test',
        port: upstreams.httpsPort,
        method: null,
        allowed: true,
        reason: `allowed.test:${upstreams.httpsPort}`,
      },
    ]);
  });

  it('forwards an allowed plain-HTTP request', async () => {
    const socketPath = await startProxy({
      mode: 'allowlist',
      rules: parseEgressRules([`*.wild.test:${upstreams.httpPort}`]),
    });
    const answer = await plainThrough(
      socketPath,
      `http://a.wild.test:${upstreams.httpPort}/path?q=1`,
      { method: 'POST', body: 'abc' },
    );
    expect(answer.status).toBe(200);
    expect(seenBy(answer)).toMatchObject({ method: 'POST', url: '/path?q=1', bodyBytes: 3 });
    expect(seenBy(answer).headers.host).toBe(`a.wild.test:${upstreams.httpPort}`);
  });

  it('refuses a host the list does not name, with the rule to add', async () => {
    const decisions: EgressDecision[] = [];
    const socketPath = await startProxy(
      { mode: 'allowlist', rules: parseEgressRules(['allowed.test']) },
      decisions,
    );
    const tunnel = await connectThrough(socketPath, 'api.other.test:443');
    expect(tunnel).toEqual({
      refused: expect.objectContaining({ status: 403 }) as unknown,
    });
    const { refused } = tunnel as { refused: ProxyAnswer };
    expect(refused.headers['x-ambient-egress']).toBe('denied');
    expect(refused.body).toBe(
      `egress refused: api.other.test:443 is not in this environment's egress_allow; add "api.other.test" to allow it\n`,
    );
    const plain = await plainThrough(socketPath, `http://allowed.test:${upstreams.httpPort}/`);
    expect(plain.status).toBe(403);
    expect(plain.body).toContain(`add "allowed.test:${upstreams.httpPort}" to allow it`);
    // Flagged for an `egress: unlisted` approval rule (a method refusal is not: see below).
    expect(decisions.map((d) => [d.host, d.port, d.unlisted])).toEqual([
      ['api.other.test', 443, true],
      ['allowed.test', upstreams.httpPort, true],
    ]);
  });

  it('intercepts a host with a method rule: GET passes, POST is refused naming the rule', async () => {
    const decisions: EgressDecision[] = [];
    const socketPath = await startProxy(
      {
        mode: 'allowlist',
        rules: parseEgressRules([
          { host: `api.test:${upstreams.httpsPort}`, methods: ['GET', 'HEAD'] },
        ]),
      },
      decisions,
    );
    // Only the proxy's CA is trusted: the answer proves the proxy terminated TLS.
    const [get, post, again] = await httpsThrough(
      socketPath,
      'api.test',
      [proxy!.caCertPem],
      { path: '/read' },
      { method: 'POST', path: '/write', body: 'x' },
      { path: '/read-again' },
    );
    expect(get.status).toBe(200);
    expect(seenBy(get).url).toBe('/read');
    expect(post.status).toBe(403);
    expect(post.headers['x-ambient-egress']).toBe('denied');
    expect(post.body).toBe(
      `egress refused: POST to api.test:${upstreams.httpsPort} is not among the methods of the egress_allow rule "api.test:${upstreams.httpsPort} (GET, HEAD)"; add "POST" to its methods to allow it\n`,
    );
    expect(seenBy(again).url).toBe('/read-again');
    expect(upstreams.seen.some((r) => r.url === '/write')).toBe(false);
    expect(decisions.map((d) => [d.method, d.allowed, d.unlisted ?? false])).toEqual([
      ['GET', true, false],
      ['POST', false, false],
      ['GET', true, false],
    ]);
  });

  it('puts a bound secret in headers and Basic credentials for its host, and nowhere else', async () => {
    const socketPath = await startProxy({
      mode: 'allowlist',
      rules: parseEgressRules([
        `secret.test:${upstreams.httpsPort}`,
        `other.test:${upstreams.httpsPort}`,
        `secret.test:${upstreams.httpPort}`,
      ]),
      secrets: [
        {
          ...TOKEN,
          hosts: [`secret.test:${upstreams.httpsPort}`, `secret.test:${upstreams.httpPort}`],
        },
      ],
    });
    const basic = (user: string, pass: string) =>
      `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    const headers = {
      authorization: `token ${TOKEN.placeholder}`,
      'x-api-key': TOKEN.placeholder,
    };
    const [bearer, git] = await httpsThrough(
      socketPath,
      'secret.test',
      [proxy!.caCertPem],
      { path: '/api', headers },
      {
        path: '/repo.git/info/refs',
        headers: { authorization: basic('x-access-token', TOKEN.placeholder) },
      },
    );
    expect(seenBy(bearer).headers).toMatchObject({
      authorization: `token ${TOKEN.value}`,
      'x-api-key': TOKEN.value,
    });
    expect(seenBy(git).headers.authorization).toBe(basic('x-access-token', TOKEN.value));

    // Not bound to other.test: a plain tunnel, the placeholder goes as it is.
    const [elsewhere] = await httpsThrough(socketPath, 'other.test', [upstreams.ca.certPem], {
      path: '/steal',
      headers,
    });
    expect(seenBy(elsewhere).headers).toMatchObject(headers);

    const plain = await plainThrough(
      socketPath,
      `http://x-access-token:${TOKEN.placeholder}@secret.test:${upstreams.httpPort}/clone`,
    );
    expect(seenBy(plain).headers.authorization).toBe(basic('x-access-token', TOKEN.value));
    expect(JSON.stringify(upstreams.seen.filter((r) => r.url === '/steal'))).not.toContain(
      TOKEN.value,
    );
  });

  it('keeps a bound secret from riding to another origin (Host header, absolute URL)', async () => {
    const socketPath = await startProxy({
      mode: 'allowlist',
      rules: parseEgressRules([
        `secret.test:${upstreams.httpsPort}`,
        `a.test:${upstreams.httpPort}`,
      ]),
      secrets: [{ ...TOKEN, hosts: [`secret.test:${upstreams.httpsPort}`] }],
    });
    const authorization = `token ${TOKEN.placeholder}`;
    const [fronted, absolute] = await httpsThrough(
      socketPath,
      'secret.test',
      [proxy!.caCertPem],
      { path: '/fronted', headers: { host: 'evil.test', authorization } },
      { path: 'https://evil.test/absolute', headers: { authorization } },
    );
    expect(fronted.status).toBe(403);
    expect(fronted.body).toBe(
      `egress refused: the tunnel goes to secret.test:${upstreams.httpsPort}, its requests cannot name Host "evil.test"\n`,
    );
    expect(absolute.status).toBe(403);
    const plain = await plainThrough(socketPath, `http://a.test:${upstreams.httpPort}/named`, {
      headers: { host: 'evil.test' },
    });
    expect(seenBy(plain).headers.host).toBe(`a.test:${upstreams.httpPort}`);
    expect(upstreams.seen.map((r) => r.url)).not.toContain('/fronted');
  });

  it('streams a chunked upload and a large download through an intercepted host', async () => {
    const socketPath = await startProxy({
      mode: 'allowlist',
      rules: parseEgressRules([`secret.test:${upstreams.httpsPort}`]),
      secrets: [{ ...TOKEN, hosts: [`secret.test:${upstreams.httpsPort}`] }],
    });
    const tunnel = await connectThrough(socketPath, `secret.test:${upstreams.httpsPort}`);
    if (!('socket' in tunnel)) throw new Error('refused');
    const tls = await tlsOver(tunnel.socket, 'secret.test', [proxy!.caCertPem]);
    const upload = await requestOver(tls, 'secret.test', {
      method: 'PUT',
      path: '/upload',
      headers: { 'transfer-encoding': 'chunked' },
      body: Buffer.alloc(300_000, 'u'),
    });
    expect(seenBy(upload)).toMatchObject({ method: 'PUT', bodyBytes: 300_000 });
    const download = await requestOver(tls, 'secret.test', { path: '/bytes/5000000' });
    expect(download.status).toBe(200);
    expect(download.body.length).toBe(5_000_000);
    tls.destroy();
  });
});

describe('EgressProxy and the guard', () => {
  it('refuses loopback the allow list does not list, and names that resolve inside, in egress mode', async () => {
    const decisions: EgressDecision[] = [];
    const socketPath = await startProxy({ mode: 'egress' }, decisions);
    const loopback = await connectThrough(socketPath, '127.0.0.2:443');
    expect(loopback).toEqual({
      refused: expect.objectContaining({
        status: 403,
        body: 'egress refused: 127.0.0.2 is a loopback address (AMBIENT_EGRESS_ALLOW)\n',
      }) as unknown,
    });
    const inside = await plainThrough(socketPath, 'http://inside.evil/latest/meta-data');
    expect(inside.status).toBe(403);
    expect(inside.body).toBe(
      'egress refused: inside.evil resolves to a private address (AMBIENT_EGRESS_ALLOW)\n',
    );
    const metadata = await connectThrough(socketPath, '[::ffff:169.254.169.254]:80');
    expect('refused' in metadata && metadata.refused.status).toBe(403);
    // Allow-listed loopback passes in egress mode.
    const [allowed] = await httpsThrough(socketPath, 'any.test', [upstreams.ca.certPem], {
      path: '/ok',
    });
    expect(allowed.status).toBe(200);
    expect(decisions.map((d) => [d.host, d.allowed])).toEqual([
      ['127.0.0.2', false],
      ['inside.evil', false],
      ['::ffff:a9fe:a9fe', false],
      ['any.test', true],
    ]);
  });

  it('the guard applies in allowlist mode too', async () => {
    const socketPath = await startProxy({
      mode: 'allowlist',
      rules: parseEgressRules(['inside.evil', '127.0.0.2']),
    });
    expect(await connectThrough(socketPath, 'inside.evil:443')).toEqual({
      refused: expect.objectContaining({ status: 403 }) as unknown,
    });
    expect(await connectThrough(socketPath, '127.0.0.2:443')).toEqual({
      refused: expect.objectContaining({ status: 403 }) as unknown,
    });
  });

  it('delivers everything an upstream sent before it closed the tunnel', async () => {
    const size = 16 * 1024 * 1024;
    const sender = createNetServer((socket) => socket.end(Buffer.alloc(size, 'z')));
    await new Promise<void>((resolve) => sender.listen(0, '127.0.0.1', resolve));
    const { port } = sender.address() as AddressInfo;
    try {
      const socketPath = await startProxy({ mode: 'egress' });
      const tunnel = await connectThrough(socketPath, `bulk.test:${port}`);
      if (!('socket' in tunnel)) throw new Error('refused');
      let received = 0;
      tunnel.socket.on('data', (chunk: Buffer) => (received += chunk.length));
      await new Promise((resolve) => tunnel.socket.once('close', resolve));
      expect(received).toBe(size);
    } finally {
      sender.close();
    }
  });

  it('sends a GET again when the kept-alive upstream connection was closed under it', async () => {
    // Answers the first request of each connection, and drops the connection at the second.
    const flaky = createNetServer((socket) => {
      let requests = 0;
      socket.on('data', (chunk: Buffer) => {
        if (!chunk.includes('\r\n\r\n')) return;
        requests++;
        if (requests === 1) {
          socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
        } else {
          socket.resetAndDestroy();
        }
      });
    });
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    const { port } = flaky.address() as AddressInfo;
    try {
      const socketPath = await startProxy({ mode: 'egress' });
      const url = `http://flaky.test:${port}/`;
      expect((await plainThrough(socketPath, url)).body).toBe('ok');
      expect((await plainThrough(socketPath, url)).body).toBe('ok');
      const post = await plainThrough(socketPath, url, { method: 'POST', body: 'x' });
      expect(post.status).toBe(502);
    } finally {
      flaky.close();
    }
  });

  it('answers 502 when the upstream refuses the connection', async () => {
    const socketPath = await startProxy({ mode: 'egress' });
    const closed = await plainThrough(socketPath, 'http://127.0.0.1:1/');
    expect(closed.status).toBe(502);
    const tunnel = await connectThrough(socketPath, '127.0.0.1:1');
    expect('refused' in tunnel && tunnel.refused.status).toBe(502);
  });
});

describe('EgressProxy bookkeeping', () => {
  it('answers 400 to what is not a proxy request', async () => {
    const socketPath = await startProxy({ mode: 'egress' });
    const answer = await new Promise<ProxyAnswer>((resolve, reject) => {
      const req = request({ socketPath, path: '/not-absolute' }, (res) => {
        void readAnswer(res).then(resolve, reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toBe(
      'egress error: this is an HTTP proxy; send CONNECT host:port or an absolute http:// URL\n',
    );
  });

  it('answers 431 to a request head over its bound', async () => {
    const socketPath = await startProxy({ mode: 'egress' });
    const answer = await plainThrough(socketPath, `http://big.test:${upstreams.httpPort}/`, {
      headers: { 'x-filler': 'f'.repeat(40 * 1024) },
    });
    expect(answer.status).toBe(431);
    expect(upstreams.seen.some((r) => r.headers['x-filler'])).toBe(false);
  });

  it('folds repeated decisions in stats()', async () => {
    const socketPath = await startProxy({
      mode: 'allowlist',
      rules: parseEgressRules([`allowed.test:${upstreams.httpPort}`]),
    });
    for (let i = 0; i < 3; i++) {
      await plainThrough(socketPath, `http://allowed.test:${upstreams.httpPort}/`);
      await connectThrough(socketPath, 'denied.test:443');
    }
    await plainThrough(socketPath, 'http://denied.test/', { method: 'DELETE' });
    expect(proxy!.stats()).toEqual({
      allowed: [{ host: 'allowed.test', port: upstreams.httpPort, count: 3 }],
      denied: [
        {
          host: 'denied.test',
          port: 443,
          method: null,
          reason: `egress refused: denied.test:443 is not in this environment's egress_allow; add "denied.test" to allow it`,
          count: 3,
        },
        {
          host: 'denied.test',
          port: 80,
          method: 'DELETE',
          reason: `egress refused: denied.test:80 is not in this environment's egress_allow; add "denied.test" to allow it`,
          count: 1,
        },
      ],
    });
  });

  it('refuses to start with a secret bound to something that is not a host pattern', async () => {
    await expect(
      EgressProxy.start({
        policy: { mode: 'egress', rules: [], secrets: [{ ...TOKEN, hosts: ['not a host'] }] },
        guard,
      }),
    ).rejects.toThrow('secrets.GITHUB_TOKEN.inject_hosts.0: "not a host" is not a host name');
  });

  it('answers 503 beyond its connection limit, and serves again once one closes', async () => {
    const socketPath = await startProxy({ mode: 'egress' }, [], 2);
    const open = async () => {
      const tunnel = await connectThrough(socketPath, `busy.test:${upstreams.httpsPort}`);
      if (!('socket' in tunnel)) throw new Error(`refused: ${tunnel.refused.body}`);
      return tunnel.socket;
    };
    const first = await open();
    await open();
    expect(await connectThrough(socketPath, `busy.test:${upstreams.httpsPort}`)).toEqual({
      refused: {
        status: 503,
        headers: expect.objectContaining({ 'x-ambient-egress': 'error' }) as unknown,
        body: 'egress error: too many connections open through this proxy\n',
      },
    });
    const closed = new Promise((resolve) => first.once('close', resolve));
    first.destroy();
    await closed;
    await waitFor(
      () => connectThrough(socketPath, `busy.test:${upstreams.httpsPort}`),
      (answer) => 'socket' in answer,
      { what: 'a free connection slot' },
    );
  });

  it('close() ends open tunnels and stops listening, and can be called again', async () => {
    const socketPath = await startProxy({ mode: 'egress' });
    const tunnel = await connectThrough(socketPath, `open.test:${upstreams.httpsPort}`);
    if (!('socket' in tunnel)) throw new Error('refused');
    const socket: Socket = tunnel.socket;
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    await proxy!.close();
    await ended;
    await proxy!.close();
    await expect(connectThrough(socketPath, 'open.test:443')).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});
