import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A container's writable layer (overlay2's upper directory, read on this host) as it was once the
 * container started: each entry's path with its inode, mode, size and change time. Nothing the
 * container's processes write outside its mounts escapes it: a file written under HOME, a package
 * installed, a file of the image changed or deleted (a whiteout), a directory's mode changed. A
 * change time cannot be set back by the sandbox's user.
 *
 * The layer is tenant content read with plain fs, and only read: `lstat` and `readdir`, never a
 * link followed (a directory is entered only when its entry says it is one), while none of the
 * container's processes runs (see container-returns.ts).
 */
export type LayerSnapshot = ReadonlyMap<string, string>;

/** More entries than this in a fresh container's layer: not one of Ambient's shape; no snapshot. */
const MOST_ENTRIES = 1000;

/** The layer's snapshot; null when it cannot be read or holds more than MOST_ENTRIES. */
export async function snapshotLayer(upperDir: string): Promise<LayerSnapshot | null> {
  const entries = new Map<string, string>();
  try {
    const whole = await walk(upperDir, '', (path, key) => {
      entries.set(path, key);
      return entries.size <= MOST_ENTRIES;
    });
    return whole ? entries : null;
  } catch (_error) {
    return null;
  }
}

/**
 * Whether the layer is as the snapshot says; false at the first entry that differs, is new or is
 * missing (a layer filled with files is not read to its end), or when it cannot be read.
 */
export async function layerUnchanged(upperDir: string, snapshot: LayerSnapshot): Promise<boolean> {
  let seen = 0;
  try {
    const same = await walk(upperDir, '', (path, key) => {
      seen++;
      return snapshot.get(path) === key;
    });
    return same && seen === snapshot.size;
  } catch (_error) {
    return false;
  }
}

/** Visits every entry below `dir` without following links; stops (false) once `visit` says so. */
async function walk(
  root: string,
  relative: string,
  visit: (path: string, key: string) => boolean,
): Promise<boolean> {
  for (const entry of await readdir(join(root, relative), { withFileTypes: true })) {
    const path = join(relative, entry.name);
    const stats = await lstat(join(root, path), { bigint: true });
    if (!visit(path, `${stats.ino}:${stats.mode}:${stats.size}:${stats.ctimeNs}`)) return false;
    if (entry.isDirectory() && !(await walk(root, path, visit))) return false;
  }
  return true;
}
