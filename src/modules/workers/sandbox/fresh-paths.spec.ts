import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { connect, createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenOnSocketPath, makeFreshDir } from './fresh-paths';

describe('fresh paths in a sandbox private directory', () => {
  let dir: string;
  const servers: Server[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ambient-fresh-'));
  });

  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
    await rm(dir, { recursive: true, force: true });
  });

  const served = (): Server => {
    const server = createServer((socket) => socket.end('hello'));
    servers.push(server);
    return server;
  };

  const greeting = (path: string): Promise<string> =>
    new Promise((resolve, reject) => {
      let said = '';
      connect(path)
        .on('data', (chunk) => (said += String(chunk)))
        .on('end', () => resolve(said))
        .on('error', reject);
    });

  it('serves on a new path', async () => {
    const path = join(dir, 'api.sock');
    await listenOnSocketPath(served(), path);
    expect(await greeting(path)).toBe('hello');
  });

  it('replaces the socket a crashed process left (nobody listens on it)', async () => {
    const path = join(dir, 'api.sock');
    // A process killed while it listens leaves its socket file behind.
    const crashed = spawn(process.execPath, [
      '-e',
      `require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]);
    await new Promise((resolve) => crashed.on('exit', resolve));
    expect((await stat(path)).isSocket()).toBe(true);

    await listenOnSocketPath(served(), path);
    expect(await greeting(path)).toBe('hello');
  });

  it('refuses a path that holds something other than a socket, and leaves it', async () => {
    const path = join(dir, 'api.sock');
    await writeFile(path, 'not a socket');
    await expect(listenOnSocketPath(served(), path)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect((await stat(path)).isFile()).toBe(true);
  });

  it('makes a directory, its missing parents, and empties a leftover of the same name', async () => {
    const fresh = join(dir, 'root', 'run-1');
    await makeFreshDir(fresh);
    expect(((await stat(fresh)).mode & 0o777).toString(8)).toBe('700');

    await mkdir(join(fresh, 'files'));
    await writeFile(join(fresh, 'files', 'passwd'), 'old');
    await makeFreshDir(fresh);
    expect(await readdir(fresh)).toEqual([]);
  });
});
