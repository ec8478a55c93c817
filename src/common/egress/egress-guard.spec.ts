import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EgressAllowList } from './egress-allow-list';
import { EgressGuard, EgressRefusedError, type Resolver } from './egress-guard';
import { guardedFetch } from './guarded-fetch';

/** A resolver answering `answers` in turn (the last one again once they run out). */
function scriptedResolver(...answers: string[][]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = (host: string) => {
    calls.push(host);
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)];
    return Promise.resolve(
      answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };
  return Object.assign(resolver, { calls });
}

describe('EgressGuard.check', () => {
  const guard = new EgressGuard();

  it('refuses an address literal in a refused range, naming it and the setting', async () => {
    await expect(guard.check('127.0.0.1', 80)).rejects.toThrow(
      new EgressRefusedError(
        'egress refused: 127.0.0.1 is a loopback address (AMBIENT_EGRESS_ALLOW)',
      ),
    );
    await expect(guard.check('[::ffff:169.254.169.254]', 80)).rejects.toThrow(
      'egress refused: ::ffff:a9fe:a9fe is an IPv4-mapped form of 169.254.169.254, a link-local address (AMBIENT_EGRESS_ALLOW)',
    );
  });

  it('refuses a name that resolves to loopback, without naming the address', async () => {
    await expect(guard.check('localhost', 80)).rejects.toThrow(
      'egress refused: localhost resolves to a loopback address (AMBIENT_EGRESS_ALLOW)',
    );
  });

  it('refuses a name when any of its addresses is refused', async () => {
    const mixed = new EgressGuard(undefined, scriptedResolver(['8.8.8.8', '10.0.0.1']));
    await expect(mixed.check('mixed.test', 443)).rejects.toThrow(
      'egress refused: mixed.test resolves to a private address (AMBIENT_EGRESS_ALLOW)',
    );
  });

  it('pins the first address of a public name', async () => {
    const resolver = scriptedResolver(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
    const target = await new EgressGuard(undefined, resolver).check('Example.COM.', 443);
    expect(target).toEqual({ host: 'example.com', port: 443, address: '93.184.215.14', family: 4 });
    expect(resolver.calls).toEqual(['example.com']);
  });

  it('refuses a name that does not resolve', async () => {
    const failing: Resolver = () =>
      Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));
    await expect(new EgressGuard(undefined, failing).check('nowhere.test', 443)).rejects.toThrow(
      'egress refused: cannot resolve nowhere.test (ENOTFOUND)',
    );
  });

  it('lets through what AMBIENT_EGRESS_ALLOW lists, and only that', async () => {
    const allowed = EgressGuard.fromSetting('127.0.0.1:8080,localhost:9000');
    await expect(allowed.check('127.0.0.1', 8080)).resolves.toMatchObject({ address: '127.0.0.1' });
    await expect(allowed.check('127.0.0.1', 8081)).rejects.toThrow('loopback');
    await expect(allowed.check('localhost', 9000)).resolves.toMatchObject({ host: 'localhost' });
    await expect(allowed.check('localhost', 9001)).rejects.toThrow('loopback');
  });
});

describe('pinning (no DNS rebinding)', () => {
  /** Two listeners on one port: 127.0.0.2 plays a public host, 127.0.0.1 the host's loopback. */
  let publicSide: Server;
  let loopback: Server;
  let port: number;
  const seen = { publicSide: 0, loopback: 0 };

  const listen = (server: Server, host: string, at: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(at, host, () => resolve((server.address() as AddressInfo).port));
    });

  beforeAll(async () => {
    publicSide = createServer((_req, res) => res.end('public'));
    loopback = createServer((_req, res) => res.end('loopback'));
    publicSide.on('connection', () => seen.publicSide++);
    loopback.on('connection', () => seen.loopback++);
    for (let attempt = 0; ; attempt++) {
      port = await listen(publicSide, '127.0.0.2', 0);
      try {
        await listen(loopback, '127.0.0.1', port);
        break;
      } catch (err) {
        await new Promise((resolve) => publicSide.close(resolve));
        if (attempt === 4) throw err;
      }
    }
  });
  afterAll(async () => {
    await new Promise((resolve) => publicSide.close(resolve));
    await new Promise((resolve) => loopback.close(resolve));
  });

  it('connects to the address it checked, not to what a later lookup answers', async () => {
    // "localhost" as the system resolves it is 127.0.0.1: were the name resolved again for the
    // connection, the request would land on the loopback listener.
    const resolver = scriptedResolver(['127.0.0.2'], ['127.0.0.1']);
    const fetch = guardedFetch(new EgressGuard(EgressAllowList.parse('127.0.0.2'), resolver));
    const first = await fetch(`http://localhost:${port}/`);
    expect(await first.text()).toBe('public');
    expect(seen).toEqual({ publicSide: 1, loopback: 0 });

    // The next request checks again and the rebound name is refused before any connection.
    await expect(fetch(`http://localhost:${port}/`)).rejects.toThrow(
      'egress refused: localhost resolves to a loopback address (AMBIENT_EGRESS_ALLOW)',
    );
    expect(seen).toEqual({ publicSide: 1, loopback: 0 });
    expect(resolver.calls).toEqual(['localhost', 'localhost']);
  });
});
