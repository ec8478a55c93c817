import { accessSync, constants, existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { CgroupLimits, lingeringRemovalsSettled, SANDBOXES_CPU_WEIGHT } from './cgroup-limits';

const V2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
/** Where the sandboxes' parent group keeps its CPU weight, and a default group's value. */
const WEIGHT = V2
  ? { dir: '/sys/fs/cgroup/ambient', file: 'cpu.weight', default: '100' }
  : { dir: '/sys/fs/cgroup/cpu/ambient', file: 'cpu.shares', default: '1024' };

function cgroupsWritable(): boolean {
  try {
    accessSync(V2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/cpu', constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

// Needs a writable cgroup tree (root, or a delegated one), as the sandboxes' limits do.
const itWithCgroups = cgroupsWritable() ? it : it.skip;

describe('CgroupLimits', () => {
  itWithCgroups('gives all sandboxes together a low CPU weight beside the service', async () => {
    await mkdir(WEIGHT.dir, { recursive: true });
    await writeFile(`${WEIGHT.dir}/${WEIGHT.file}`, WEIGHT.default);
    const group = await CgroupLimits.create(`cgroup-limits-spec-${process.pid}`, {
      memoryMb: 64,
      pids: 16,
      cpus: 1,
    });
    try {
      expect(group).not.toBeNull();
      const weight = (await readFile(`${WEIGHT.dir}/${WEIGHT.file}`, 'utf8')).trim();
      expect(weight).toBe(
        String(V2 ? SANDBOXES_CPU_WEIGHT.v2Weight : SANDBOXES_CPU_WEIGHT.v1Shares),
      );
    } finally {
      await group?.remove();
    }
  });

  itWithCgroups(
    'kills what still runs in a group and removes it, in the background once it lingers',
    async () => {
      const group = await CgroupLimits.create(`cgroup-limits-spec-rm-${process.pid}`, {
        memoryMb: 64,
        pids: 16,
        cpus: 1,
      });
      expect(group).not.toBeNull();
      // A shell that joins the group, says so, and then waits for a long time.
      const [procs] = group!.procsFiles;
      const child = spawn('/bin/sh', ['-c', `echo $$ > ${procs} && echo in && exec sleep 600`]);
      await once(child.stdout, 'data');
      const exited = once(child, 'exit');
      await group!.remove();
      await lingeringRemovalsSettled();
      await exited;
      for (const file of group!.procsFiles) expect(existsSync(file)).toBe(false);
    },
  );
});
