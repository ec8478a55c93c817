import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiBridge } from './api-bridge';

describe('ApiBridge', () => {
  let dir: string;
  let api: Server;
  let apiUrl: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ambient-bridge-'));
    api = createServer((req, res) => res.end(`api saw ${req.url}`));
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/api/v1`;
  });

  afterEach(async () => {
    await new Promise((resolve) => api.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const get = (socketPath: string, path: string): Promise<string> =>
    new Promise((resolve, reject) => {
      request({ socketPath, path }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += String(chunk)));
        res.on('end', () => resolve(body));
      })
        .on('error', reject)
        .end();
    });

  it('goes on serving after an accept fails (Node emits it on the server), not ending the process', async () => {
    const socketPath = join(dir, 'api.sock');
    const bridge = await ApiBridge.listen(socketPath, apiUrl);
    try {
      expect(await get(socketPath, '/api/v1/runs')).toBe('api saw /api/v1/runs');
      const server = (bridge as unknown as { server: NetServer }).server;
      const accept = Object.assign(new Error('accept EMFILE'), { code: 'EMFILE' });
      // Without a listener, emit throws: what an uncaught accept failure does to the worker.
      expect(() => server.emit('error', accept)).not.toThrow();
      expect(await get(socketPath, '/api/v1/runs/1')).toBe('api saw /api/v1/runs/1');
    } finally {
      await bridge.close();
    }
  });
});
