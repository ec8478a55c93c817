import { constants, Dirent } from 'node:fs';
import { FileHandle, open, readdir, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * Reading (and writing) files of a tree a tenant controls — a repository checkout, a run's
 * workspace — with the service's own privileges, without ever following a link out of it.
 *
 * Race-free: nothing is checked and then opened again by name. The last component is opened with
 * O_PATH | O_NOFOLLOW (a symlink opens as the link itself and is refused; a FIFO or device is not
 * opened for I/O at all), the *opened* descriptor is verified (its type, and through
 * /proc/self/fd where it really is: inside the tree's real root), and only then is that very
 * inode opened for reading through the descriptor's /proc link. Directories met on the way may be
 * links; wherever they lead, the file they reach must lie inside the tree. Linux only (O_PATH,
 * /proc), like the sandboxes.
 */

/** Linux's O_PATH (not exported by node:fs): a descriptor that names an inode but reads nothing. */
const O_PATH = 0o10000000;
const READ_CHUNK = 64 * 1024;

export type TenantFileProblem =
  'invalid_path' | 'missing' | 'link' | 'outside' | 'not_file' | 'not_directory' | 'too_large';

/** Why a tenant file was refused; the message names the path as the tenant gave it. */
export class TenantFileError extends Error {
  constructor(
    readonly problem: TenantFileProblem,
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the tree is called in messages ("repository", "workspace"). */
export interface TenantTree {
  root: string;
  label: string;
}

/** The bytes of a regular file of the tree; more than `maxBytes` is refused while reading. */
export async function readTenantFile(
  tree: TenantTree,
  path: string,
  maxBytes: number,
): Promise<Buffer> {
  const located = await openVerified(tree, path, 'file');
  try {
    const handle = await open(
      `/proc/self/fd/${located.fd}`,
      constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY,
    );
    try {
      return await readCapped(handle, maxBytes, () =>
        refuse('too_large', path, `${path} is larger than ${maxBytes} bytes`),
      );
    } finally {
      await handle.close();
    }
  } finally {
    await located.close();
  }
}

/** The entries of a directory of the tree (links are listed as links, never followed here). */
export async function listTenantDir(tree: TenantTree, path: string): Promise<Dirent[]> {
  const located = await openVerified(tree, path, 'directory');
  try {
    return await readdir(`/proc/self/fd/${located.fd}`, { withFileTypes: true });
  } finally {
    await located.close();
  }
}

/**
 * Opens `path` of the tree by descriptor and proves it is a `kind` inside the tree's real root;
 * the O_PATH handle is returned open (the caller closes it), closed on every refusal.
 */
export async function openVerified(
  tree: TenantTree,
  path: string,
  kind: 'file' | 'directory',
): Promise<FileHandle> {
  const rel = relativeInside(tree, path);
  const root = await realpath(tree.root);
  let handle: FileHandle;
  try {
    handle = await open(rel ? join(root, rel) : root, O_PATH | constants.O_NOFOLLOW);
  } catch (err) {
    throw openError(err as NodeJS.ErrnoException, tree, path, kind);
  }
  try {
    const info = await handle.stat();
    if (info.isSymbolicLink()) refuse('link', path, `${path} is a symbolic link`);
    const real = await readlink(`/proc/self/fd/${handle.fd}`);
    if (real !== root && !real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`)) {
      refuse('outside', path, `${path} resolves outside the ${tree.label}`);
    }
    if (kind === 'file' && !info.isFile()) {
      refuse('not_file', path, `${path} is not a regular file`);
    }
    if (kind === 'directory' && !info.isDirectory()) {
      refuse('not_directory', path, `${path} is not a directory`);
    }
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** `path` relative to the tree ('' for its root); `..` out of it, NUL and the like refused. */
export function relativeInside(tree: TenantTree, path: string): string {
  if (typeof path !== 'string' || path.includes('\0')) {
    refuse('invalid_path', String(path), `${JSON.stringify(path)} is not a valid path`);
  }
  const rel = relative(resolve(tree.root), resolve(tree.root, path));
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    refuse('outside', path, `${path} is outside the ${tree.label}`);
  }
  return rel;
}

function openError(
  err: NodeJS.ErrnoException,
  tree: TenantTree,
  path: string,
  kind: 'file' | 'directory',
): Error {
  switch (err.code) {
    case 'ENOENT':
      return new TenantFileError('missing', path, `${path} does not exist`);
    case 'ELOOP':
      return new TenantFileError('link', path, `${path} has a symbolic link loop`);
    case 'ENOTDIR':
      return kind === 'directory'
        ? new TenantFileError('not_directory', path, `${path} is not a directory`)
        : new TenantFileError('missing', path, `${path} does not exist`);
    case 'EACCES':
    case 'EPERM':
      return new TenantFileError('outside', path, `${path} cannot be read in the ${tree.label}`);
    default:
      return err;
  }
}

async function readCapped(
  handle: FileHandle,
  maxBytes: number,
  tooLarge: () => never,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK, maxBytes + 1 - total));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
    if (total > maxBytes) tooLarge();
  }
}

function refuse(problem: TenantFileProblem, path: string, message: string): never {
  throw new TenantFileError(problem, path, message);
}
