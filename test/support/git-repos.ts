import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A bare repository `<root>/<owner>/<repo>.git` holding one commit with `files`, and `links`
 * (path → target) committed as symbolic links.
 */
export function bareRepo(
  root: string,
  owner: string,
  repo: string,
  files: Record<string, string>,
  links: Record<string, string> = {},
) {
  const bare = join(root, owner, `${repo}.git`);
  mkdirSync(bare, { recursive: true });
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, stdio: 'pipe', env: { ...process.env, HOME: root } });
  git(bare, 'init', '--bare', '--quiet');
  const work = mkdtempSync(join(tmpdir(), 'ambient-src-'));
  git(work, 'init', '--quiet');
  writeTree(work, files, links);
  git(work, 'add', '.');
  git(work, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'init');
  git(work, 'push', '--quiet', bare, 'HEAD:refs/heads/main');
  git(bare, 'symbolic-ref', 'HEAD', 'refs/heads/main');
  rmSync(work, { recursive: true, force: true });
}

/**
 * Adds `files` (and symbolic `links`, replacing what was at their paths) to the main branch of
 * the bare repository made by `bareRepo`, as a new commit.
 */
export function pushFiles(
  root: string,
  owner: string,
  repo: string,
  files: Record<string, string>,
  links: Record<string, string> = {},
) {
  const bare = join(root, owner, `${repo}.git`);
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, stdio: 'pipe', env: { ...process.env, HOME: root } });
  const work = mkdtempSync(join(tmpdir(), 'ambient-src-'));
  git(work, 'clone', '--quiet', bare, '.');
  writeTree(work, files, links);
  git(work, 'add', '-A', '.');
  git(work, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'more');
  git(work, 'push', '--quiet', 'origin', 'HEAD:refs/heads/main');
  rmSync(work, { recursive: true, force: true });
}

function writeTree(work: string, files: Record<string, string>, links: Record<string, string>) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(work, path, '..'), { recursive: true });
    writeFileSync(join(work, path), text);
  }
  for (const [path, target] of Object.entries(links)) {
    mkdirSync(join(work, path, '..'), { recursive: true });
    rmSync(join(work, path), { recursive: true, force: true });
    symlinkSync(target, join(work, path));
  }
}
