import { mkdtemp, rm, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EgressAllowList } from '../../../../../common/egress/egress-allow-list';
import { EgressGuard } from '../../../../../common/egress/egress-guard';
import { EgressProxy } from '../../egress-proxy/egress-proxy';
import { proxySocketPath } from './container-plumbing';

/**
 * A reused container's private directory holds the egress proxy of each run it served: the
 * previous run's proxy, still shutting down when the next one's starts, must not take the next
 * one's socket with it.
 */
describe("a container's egress proxy sockets across the runs it serves", () => {
  let dir: string;
  const proxies: EgressProxy[] = [];
  const guard = new EgressGuard(EgressAllowList.parse('127.0.0.1'), () =>
    Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' })),
  );

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ambient-plumbing-'));
  });

  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
    await rm(dir, { recursive: true, force: true });
  });

  const runProxy = async (): Promise<{ proxy: EgressProxy; socketPath: string }> => {
    const proxy = await EgressProxy.start({
      policy: { mode: 'allowlist', rules: [], secrets: [] },
      guard,
      onDecision: () => undefined,
    });
    proxies.push(proxy);
    const socketPath = proxySocketPath(dir);
    await proxy.listen(socketPath);
    return { proxy, socketPath };
  };

  /** The proxy's answer to a CONNECT it refuses (no rule allows the host): its status. */
  const refusal = (socketPath: string): Promise<number | undefined> =>
    new Promise((resolve, reject) => {
      request({ socketPath, method: 'CONNECT', path: 'example.test:443' })
        .on('connect', (res, socket) => {
          socket.destroy();
          resolve(res.statusCode);
        })
        .on('response', (res) => {
          res.resume();
          resolve(res.statusCode);
        })
        .on('error', reject)
        .end();
    });

  it("serves the next run's proxy on a socket of its own while the previous one closes", async () => {
    const previous = await runProxy();
    const next = await runProxy();
    expect(next.socketPath).not.toBe(previous.socketPath);

    await previous.proxy.close();
    await expect(stat(previous.socketPath)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await stat(next.socketPath)).isSocket()).toBe(true);
    expect(await refusal(next.socketPath)).toBe(403);
  });
});
