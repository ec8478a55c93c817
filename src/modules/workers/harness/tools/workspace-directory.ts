import { constants, type Dirent } from 'node:fs';
import { open, readdir, readlink } from 'node:fs/promises';
import { WorkspacePathError } from './workspace-paths';

/**
 * The entries of the workspace directory `absolute`, read race-free on this host: the directory
 * is opened first, the opened descriptor's real path (`/proc/self/fd/N`, what the kernel opened,
 * not a path resolved again) must lie inside `root` (the workspace's real path), and the entries
 * are read through that descriptor. A process in the sandbox that swaps a directory for a
 * symlink to a host directory in between gets a refusal, never the host directory's names.
 *
 * list_files and search_files stay on this host (unlike read_file/write_file, which run in the
 * sandbox): their results follow JavaScript regular expressions and a sorted walk that the
 * sandbox's tools (bash, coreutils) cannot reproduce in one process.
 */
export async function readWorkspaceDirectory(root: string, absolute: string): Promise<Dirent[]> {
  const handle = await open(
    absolute,
    constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW,
  );
  try {
    const opened = `/proc/self/fd/${handle.fd}`;
    if (!isInsideRoot(root, await readlink(opened))) {
      throw new WorkspacePathError('a directory of the walk was moved outside the workspace');
    }
    return await readdir(opened, { withFileTypes: true });
  } finally {
    await handle.close();
  }
}

/** Whether the real path `real` (a descriptor's, from /proc) is `root` or below it. */
export function isInsideRoot(root: string, real: string): boolean {
  return real === root || real.startsWith(root.endsWith('/') ? root : `${root}/`);
}
