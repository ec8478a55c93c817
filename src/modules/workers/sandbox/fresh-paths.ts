import { lstat, mkdir, rm } from 'node:fs/promises';
import type { Server } from 'node:net';

/**
 * Serves `server` on the Unix socket at `path`; a stale socket there (a crashed worker's) is
 * replaced, anything else refused. The listen comes first: a sandbox's private directory is new,
 * so a look before it would fail nearly every time, and a failed file system call costs an error
 * object of Node's (a stack trace) on top of the call.
 */
export async function listenOnSocketPath(server: Server, path: string): Promise<void> {
  try {
    await listenOnce(server, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    const stale = await lstat(path).catch(() => null);
    if (!stale?.isSocket()) throw err;
    await rm(path, { force: true });
    await listenOnce(server, path);
  }
}

function listenOnce(server: Server, path: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Makes `dir` (mode 0700) new and empty: a leftover of the same name is removed first, missing
 * parents are made. The plain mkdir comes first, since nearly every call finds neither (see
 * listenOnSocketPath on failed calls).
 */
export async function makeFreshDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o700 });
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') await rm(dir, { recursive: true, force: true });
    else if (code !== 'ENOENT') throw err;
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
}
