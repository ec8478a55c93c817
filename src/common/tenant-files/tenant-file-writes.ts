import { constants } from 'node:fs';
import { FileHandle, mkdir, open } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { openVerified, relativeInside, TenantFileError, TenantTree } from './tenant-files';

/**
 * Writes a file into a tree a tenant controls (a run's workspace) without following a link
 * anywhere: the parent directory is opened and verified by descriptor (see openVerified), the
 * file is created or opened through that descriptor with O_NOFOLLOW, and it must be a regular
 * file with a single link before it is truncated and written; a symlink, FIFO, device or hard
 * link planted by the sandbox is refused rather than written through.
 */
export async function writeTenantFile(
  tree: TenantTree,
  path: string,
  data: string | Buffer,
  mode = 0o644,
): Promise<void> {
  const rel = nonRootPath(tree, path);
  const parent = await openVerified(tree, dirname(rel), 'directory');
  let handle: FileHandle;
  try {
    handle = await open(
      `/proc/self/fd/${parent.fd}/${basename(rel)}`,
      constants.O_WRONLY |
        constants.O_CREAT |
        constants.O_NOFOLLOW |
        constants.O_NONBLOCK |
        constants.O_NOCTTY,
      mode,
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new TenantFileError('link', path, `${path} is a symbolic link`);
    if (code === 'ENXIO' || code === 'EISDIR') {
      throw new TenantFileError('not_file', path, `${path} is not a regular file`);
    }
    throw err;
  } finally {
    await parent.close();
  }
  try {
    const info = await handle.stat();
    if (!info.isFile())
      throw new TenantFileError('not_file', path, `${path} is not a regular file`);
    if (info.nlink !== 1) {
      throw new TenantFileError('link', path, `${path} is a hard link`);
    }
    await handle.truncate(0);
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/** Creates a directory of the tree (its parent verified by descriptor); an existing one is fine. */
export async function makeTenantDir(tree: TenantTree, path: string, mode = 0o755): Promise<void> {
  const rel = nonRootPath(tree, path);
  const parent = await openVerified(tree, dirname(rel), 'directory');
  try {
    await mkdir(`/proc/self/fd/${parent.fd}/${basename(rel)}`, { mode }).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    });
  } finally {
    await parent.close();
  }
  // Whatever was there already must be a directory of the tree, not a link out of it.
  await (await openVerified(tree, rel, 'directory')).close();
}

function nonRootPath(tree: TenantTree, path: string): string {
  const rel = relativeInside(tree, path);
  if (!rel) throw new TenantFileError('invalid_path', path, `${path} is the ${tree.label} itself`);
  return rel;
}
