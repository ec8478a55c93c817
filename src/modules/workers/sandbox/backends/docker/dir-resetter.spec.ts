import { readdirSync, readFileSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../../../../../test/support/wait';
import { DirResetter, dirResetPath } from './dir-resetter';

// Processes started and awaited: slower than the unit default on a loaded two-core machine.
jest.setTimeout(30_000);

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

  /** Pids of the processes whose command line starts with `program`. */
  function processesOf(program: string): string[] {
    return readdirSync('/proc').filter((pid) => {
      try {
        return (
          /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(program)
        );
      } catch {
        return false;
      }
    });
  }

  it('resets directories in the order asked through one process, and fails one it cannot open', async () => {
    // A copy of its own, so that only this test's server has its path.
    const program = join(root, 'ambient-dir-reset');
    await copyFile(dirResetPath()!, program);
    await chmod(program, 0o755);
    const [a, b] = [join(root, 'a'), join(root, 'b')];
    await mkdir(a, { mode: 0o700 });
    await mkdir(b, { mode: 0o777 });
    await chmod(b, 0o777);
    await symlink(a, join(root, 'link'));
    const resets = resetter(program);
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
    expect(processesOf(program)).toHaveLength(1);
    // Stopped for good (a worker's shutdown): it ends, and no request starts another.
    resets.stop();
    await waitFor(
      async () => processesOf(program),
      (left) => left.length === 0,
      { what: 'the reset server to end' },
    );
    await chmod(a, 0o700);
    expect(await resets.reset(a, 0o755, user)).toBe(false);
    expect((await stat(a)).mode & 0o777).toBe(0o700);
  });

  it('fails every request not answered in time, and ends the process that did not answer', async () => {
    const marker = `ambient-silent-reset-${process.pid}`;
    const silent = join(root, 'silent');
    await writeFile(silent, `#!/bin/bash\nexec -a ${marker} sleep 600\n`, { mode: 0o755 });
    const dir = join(root, 'dir');
    await mkdir(dir);
    const stuck = resetter(silent, 200);
    const answers = stuck.reset(dir, 0o755, user);
    // Started, and silent: the process is there while the request waits.
    await waitFor(
      async () => processesOf(marker),
      (running) => running.length === 1,
      { what: 'the silent server to start' },
    );
    expect(await Promise.all([answers, stuck.reset(dir, 0o755, user)])).toEqual([false, false]);
    await waitFor(
      async () => processesOf(marker),
      (running) => running.length === 0,
      { what: 'the silent server to be ended' },
    );
  });

  it('refuses a path with a line break or a NUL rather than send it as something else', async () => {
    expect(await resetter().reset(`${root}\n/etc`, 0o755, user)).toBe(false);
    expect(await resetter().reset(`/etc\0${root}`, 0o755, user)).toBe(false);
  });
});
