import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { groupDirs, removeGroup } from './cgroup-limits';
import { cgroupOwnerSuffix } from './cgroup-owner';
import { sweepOrphanCgroups } from './cgroup-sweep';

const V2 = existsSync('/sys/fs/cgroup/cgroup.controllers');

function cgroupsWritable(): boolean {
  try {
    accessSync(V2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/memory', constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

// Needs a writable cgroup tree (root, or a delegated one), as the sandboxes' limits do.
const itWithCgroups = cgroupsWritable() ? it : it.skip;

describe('sweepOrphanCgroups', () => {
  const dirsOf = (name: string) => [...new Set(Object.values(groupDirs(V2 ? 2 : 1, name)))];

  itWithCgroups(
    "removes a dead worker's group and kills what runs in it, and keeps a live worker's",
    async () => {
      // This process's pid with another start time: a worker that died and whose pid was reused.
      const dead = `cgroup-sweep-spec-${process.pid}-1.${process.pid}.1`;
      const live = `cgroup-sweep-spec-${process.pid}-2${cgroupOwnerSuffix()}`;
      const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
      try {
        for (const dir of [...dirsOf(dead), ...dirsOf(live)]) await mkdir(dir, { recursive: true });
        for (const dir of dirsOf(dead)) {
          await writeFile(join(dir, 'cgroup.procs'), String(sleeper.pid));
        }
        const ended = once(sleeper, 'exit');

        expect(await sweepOrphanCgroups()).toBeGreaterThanOrEqual(1);

        expect(dirsOf(dead).filter((dir) => existsSync(dir))).toEqual([]);
        expect(await ended).toEqual([null, 'SIGKILL']);
        expect(dirsOf(live).every((dir) => existsSync(dir))).toBe(true);
      } finally {
        sleeper.kill('SIGKILL');
        await removeGroup([...dirsOf(dead), ...dirsOf(live)]);
      }
    },
  );
});
