import { chmod, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DirResetter, dirResetPath } from './dir-resetter';

describe('DirResetter', () => {
  let root: string;
  const resetters: DirResetter[] = [];
  // chown to another user needs root (CI runs as root); otherwise the directory stays ours.
  const user = process.getuid!() === 0 ? { uid: 1000, gid: 1000 } : ids();

  function ids() {
    return { uid: process.getuid!(), gid: process.getgid!() };
  }

  function resetter(program = dirResetPath()!, timeoutMs = 5000): DirResetter {
    const made = new DirResetter(program, timeoutMs);
    resetters.push(made);
    return made;
  }

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'ambient-dir-reset-'));
  });

  afterEach(async () => {
    for (const made of resetters.splice(0)) made.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('is built by npm ci (CI has a C compiler)', () => {
    expect(dirResetPath()).not.toBeNull();
  });

  it('resets directories in the order asked through one process, and fails one it cannot open', async () => {
    const [a, b] = [join(root, 'a'), join(root, 'b')];
    await mkdir(a, { mode: 0o700 });
    await mkdir(b, { mode: 0o777 });
    await chmod(b, 0o777);
    await symlink(a, join(root, 'link'));
    const resets = resetter();
    const answers = await Promise.all([
      resets.reset(a, 0o755, user),
      resets.reset(join(root, 'missing'), 0o755, user),
      // A link is not followed: the directory it points at is not what was asked for.
      resets.reset(join(root, 'link'), 0o755, user),
      resets.reset(b, 0o750, user),
    ]);
    expect(answers).toEqual([true, false, false, true]);
    expect((await stat(a)).mode & 0o777).toBe(0o755);
    expect((await stat(b)).mode & 0o777).toBe(0o750);
    expect((await stat(b)).uid).toBe(user.uid);
    // Usable after the stop: another process is started.
    resets.stop();
    await chmod(a, 0o700);
    expect(await resets.reset(a, 0o755, user)).toBe(true);
    expect((await stat(a)).mode & 0o777).toBe(0o755);
  });

  it('fails every request not answered in time, and ends the process that did not answer', async () => {
    const silent = join(root, 'silent');
    await writeFile(silent, '#!/bin/sh\nexec sleep 600\n', { mode: 0o755 });
    const dir = join(root, 'dir');
    await mkdir(dir);
    const stuck = resetter(silent, 200);
    expect(
      await Promise.all([stuck.reset(dir, 0o755, user), stuck.reset(dir, 0o755, user)]),
    ).toEqual([false, false]);
  });

  it('refuses a path with a line break rather than send it as two requests', async () => {
    expect(await resetter().reset(`${root}\n/etc`, 0o755, user)).toBe(false);
  });
});
