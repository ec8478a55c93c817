import { lstat, readlink, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/** A path the model named that must not be used: outside the workspace or malformed. */
export class WorkspacePathError extends Error {}

/**
 * Resolves `path` (relative to the workspace) to an absolute path inside the workspace.
 * Refuses absolute paths, `..` escapes and symlinks (also dangling ones, and symlinked parent
 * directories) that resolve outside the workspace. The target itself need not exist.
 */
export async function resolveInWorkspace(workspaceDir: string, path: string): Promise<string> {
  if (path.includes('\0')) throw new WorkspacePathError('the path contains a NUL character');
  if (isAbsolute(path)) {
    throw new WorkspacePathError(
      `"${path}" is absolute; use a path relative to the workspace root`,
    );
  }
  const root = await realpath(workspaceDir);
  const target = resolve(root, path);
  if (!isInside(root, target)) {
    throw new WorkspacePathError(`"${path}" points outside the workspace`);
  }
  const real = await realpathOfNearestExisting(target);
  if (!isInside(root, real)) {
    throw new WorkspacePathError(`"${path}" resolves (through a symlink) outside the workspace`);
  }
  return target;
}

/** The workspace-relative form of an absolute path inside it, with `/` separators. */
export function workspaceRelative(root: string, absolute: string): string {
  return relative(root, absolute).split(sep).join('/') || '.';
}

function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The real path of `target`, or of its closest existing ancestor when it does not exist. */
async function realpathOfNearestExisting(target: string): Promise<string> {
  try {
    return await realpath(target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  // A write would follow a dangling symlink, so what counts is where it points.
  const link = await lstat(target).catch(() => undefined);
  if (link?.isSymbolicLink()) {
    return realpathOfNearestExisting(resolve(dirname(target), await readlink(target)));
  }
  const parent = dirname(target);
  return parent === target ? target : realpathOfNearestExisting(parent);
}
