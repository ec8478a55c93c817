import { DefinitionFile } from '../definition/definition.types';
import { MAX_FILE_BYTES, MAX_FILES } from '../definition/definition-parser';

/** Runs `git <args>` in the clone and returns its output (throws RepositoryError on failure). */
export type GitRunner = (args: string[]) => Promise<{ stdout: string }>;

/** Raised for a definition the repository holds in a form Ambient refuses (e.g. a symlink). */
export class DefinitionTreeError extends Error {}

interface TreeEntry {
  mode: string;
  type: string;
  oid: string;
  /** Null for trees and submodules. */
  size: number | null;
  name: string;
}

const SYMLINK_MODE = '120000';

/**
 * The definition files of a commit, read from git's objects rather than a checkout: nothing of
 * the repository is ever written to or followed on this host's file system, so a symlink in the
 * repository cannot point the service at one of its own files. Symlinks in the definition (or
 * on the way to it) are refused, naming them; submodules are skipped; dot-entries below the
 * top-level roots are ignored, as in a checkout. Sizes come from the object headers, so an
 * oversized file is reported without reading it.
 */
export async function readDefinitionTree(
  git: GitRunner,
  commit: string,
  path: string,
  roots: string[],
): Promise<DefinitionFile[]> {
  let tree = `${commit}^{tree}`;
  const walked: string[] = [];
  for (const component of path.split('/').filter(Boolean)) {
    walked.push(component);
    const entry = (await listTree(git, tree)).find((e) => e.name === component);
    if (!entry || entry.type !== 'tree') {
      if (entry?.mode === SYMLINK_MODE) throw symlinkError(walked.join('/'), 'directory');
      return [];
    }
    tree = entry.oid;
  }
  const files: DefinitionFile[] = [];
  const top = await listTree(git, tree);
  for (const root of roots) {
    const entry = top.find((e) => e.name === root);
    if (entry) await collect(git, entry, root, files);
  }
  return files;
}

async function collect(
  git: GitRunner,
  entry: TreeEntry,
  path: string,
  files: DefinitionFile[],
): Promise<void> {
  if (files.length >= MAX_FILES + 1) return;
  if (entry.mode === SYMLINK_MODE) throw symlinkError(path, 'file');
  if (entry.type === 'tree') {
    const children = (await listTree(git, entry.oid)).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    for (const child of children) {
      if (!child.name.startsWith('.')) await collect(git, child, `${path}/${child.name}`, files);
    }
  } else if (entry.type === 'blob') {
    const content =
      (entry.size ?? 0) > MAX_FILE_BYTES
        ? 'x'.repeat(MAX_FILE_BYTES + 1)
        : (await git(['cat-file', 'blob', entry.oid])).stdout;
    files.push({ path, content });
  }
}

/** `git ls-tree -z -l`: `<mode> <type> <oid> <size>\t<name>\0` per entry, one level. */
async function listTree(git: GitRunner, tree: string): Promise<TreeEntry[]> {
  const { stdout } = await git(['ls-tree', '-z', '-l', tree]);
  return stdout
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      const [mode, type, oid, size] = line.slice(0, tab).split(/ +/);
      return {
        mode,
        type,
        oid,
        size: size === '-' ? null : Number(size),
        name: line.slice(tab + 1),
      };
    });
}

function symlinkError(path: string, kind: 'file' | 'directory'): DefinitionTreeError {
  return new DefinitionTreeError(
    `${path} is a symbolic link: a definition ${kind} must be a plain ${kind} of the repository`,
  );
}
