import { constants as fsConstants } from 'node:fs';
import { lchown, open as openFile, readdir } from 'node:fs/promises';

/**
 * Changes the owner of a tree without following symbolic links, race-free: every directory is
 * opened (`O_NOFOLLOW`) and walked through its descriptor, so a process of the sandbox swapping a
 * directory for a link to a host directory mid-walk cannot make this chown the host's files.
 */
export async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  let dir;
  try {
    dir = await openFile(
      path,
      fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW,
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    // A file or a link: its own owner changes, nothing it points at.
    if (code === 'ENOTDIR' || code === 'ELOOP') return lchownIfPresent(path, uid, gid);
    throw error;
  }
  try {
    await dir.chown(uid, gid);
    const self = `/proc/self/fd/${dir.fd}`;
    const entries = await readdir(self, { withFileTypes: true });
    const files = entries.filter((entry) => !entry.isDirectory());
    await Promise.all(files.map((entry) => lchownIfPresent(`${self}/${entry.name}`, uid, gid)));
    // Directories one at a time: each holds a descriptor while it is walked.
    for (const entry of entries) {
      if (entry.isDirectory()) await chownTree(`${self}/${entry.name}`, uid, gid);
    }
  } finally {
    await dir.close();
  }
}

async function lchownIfPresent(path: string, uid: number, gid: number): Promise<void> {
  try {
    await lchown(path, uid, gid);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
