import { mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cgroupOwnerSuffix } from './cgroup-owner';
import { readKernelFile } from './kernel-files';
import type { SandboxLimits } from './sandbox.types';

const ROOT = '/sys/fs/cgroup';
/** The sandboxes' parent group; each sandbox's group is a child of it. */
const GROUP = 'ambient';
const CPU_PERIOD_US = 100_000;
/**
 * The CPU weight of all sandboxes together (the `ambient` group) against the service and the rest
 * of the host: an eighth of a default group's (cgroup v1 shares 1024, v2 weight 100). Weights only
 * matter when the CPU is contested (sandboxes still use whatever is idle, each within its own
 * quota): then the service's event loop, which every run and API request waits on, comes first.
 * With equal weights, 100 bubblewrap sandboxes starting at once took enough of a 2-core host to
 * double the API's tail latency.
 */
export const SANDBOXES_CPU_WEIGHT = { v1Shares: 128, v2Weight: 12 } as const;

/**
 * A cgroup holding every process of one sandbox, with its memory, pids and CPU limits (cgroup v2,
 * or the memory/pids/cpu hierarchies of v1). Needs write access to the cgroup tree (root, or a
 * delegated subtree); `create` returns null where there is none. A group's directories and files
 * are made, written, read and removed synchronously (see kernel-files.ts).
 */
export class CgroupLimits {
  private oomKills = 0;
  private pidsMaxHits = 0;

  private constructor(
    private readonly version: 1 | 2,
    /** One directory on v2; memory, pids and cpu directories on v1. */
    private readonly dirs: { memory: string; pids: string; cpu: string },
    private readonly limits: SandboxLimits,
  ) {}

  /**
   * Null when cgroups cannot be written here (limits then cannot be enforced). The group is named
   * `<name>.<pid>.<start time>` of this process, so that the groups of a process that died before
   * removing them are told from live ones (see `sweepOrphanCgroups`).
   */
  static async create(name: string, limits: SandboxLimits): Promise<CgroupLimits | null> {
    const version = await cgroupVersion();
    if (!version) return null;
    const dirs = groupDirs(version, `${name}${cgroupOwnerSuffix()}`);
    try {
      if (version === 2) await enableV2Controllers();
      for (const dir of new Set(Object.values(dirs))) mkdirSync(dir, { recursive: true });
      await weighSandboxesGroupOnce(version);
      const group = new CgroupLimits(version, dirs, limits);
      group.apply();
      return group;
    } catch {
      await removeGroup(Object.values(dirs));
      return null;
    }
  }

  /** Files a starting process writes its pid to, to join the group before it forks. */
  get procsFiles(): string[] {
    return [...new Set(Object.values(this.dirs))].map((dir) => join(dir, 'cgroup.procs'));
  }

  private apply(): void {
    const memory = String(this.limits.memoryMb * 1024 * 1024);
    const quota = String(Math.round(this.limits.cpus * CPU_PERIOD_US));
    const optional = (file: string, value: string) => {
      try {
        writeFileSync(file, value);
      } catch {
        // The kernel has no swap accounting.
      }
    };
    if (this.version === 2) {
      writeFileSync(join(this.dirs.memory, 'memory.max'), memory);
      optional(join(this.dirs.memory, 'memory.swap.max'), '0');
      writeFileSync(join(this.dirs.pids, 'pids.max'), String(this.limits.pids));
      writeFileSync(join(this.dirs.cpu, 'cpu.max'), `${quota} ${CPU_PERIOD_US}`);
      return;
    }
    writeFileSync(join(this.dirs.memory, 'memory.limit_in_bytes'), memory);
    // Without swap accounting the limit would push memory into swap instead of ending the hog.
    optional(join(this.dirs.memory, 'memory.memsw.limit_in_bytes'), memory);
    writeFileSync(join(this.dirs.pids, 'pids.max'), String(this.limits.pids));
    writeFileSync(join(this.dirs.cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
    writeFileSync(join(this.dirs.cpu, 'cpu.cfs_quota_us'), quota);
  }

  /** What ended a process since the last call: the memory limit, the pids limit, or neither. */
  limitHit(): string | null {
    const oomFile = this.version === 2 ? 'memory.events' : 'memory.oom_control';
    const oomKills = counter(join(this.dirs.memory, oomFile), 'oom_kill');
    const pidsMaxHits = counter(join(this.dirs.pids, 'pids.events'), 'max');
    const oom = oomKills > this.oomKills;
    const pids = pidsMaxHits > this.pidsMaxHits;
    this.oomKills = oomKills;
    this.pidsMaxHits = pidsMaxHits;
    if (oom) return `out of memory: the sandbox's memory limit is ${this.limits.memoryMb} MiB`;
    if (pids) return `process limit reached: the sandbox allows ${this.limits.pids} processes`;
    return null;
  }

  /**
   * Kills what is left in the group and removes it. When its processes are still exiting after a
   * few tries (a loaded host reaps slowly), the removal goes on in the background, bounded
   * (`lingeringRemovals`): the sandbox's close does not wait for it, and the group is not left
   * behind for as long as its maker lives (the sweep only takes the groups of dead makers).
   */
  async remove(): Promise<void> {
    const dirs = Object.values(this.dirs);
    if (await removeGroup(dirs, QUICK_REMOVAL_ATTEMPTS)) return;
    const lingering = removeGroup(dirs, LINGERING_REMOVAL_ATTEMPTS, LINGERING_REMOVAL_PAUSE_MS)
      .catch(() => false)
      .finally(() => lingeringRemovals.delete(lingering));
    lingeringRemovals.add(lingering);
  }
}

/**
 * Tries to remove a group before `remove` hands it to the background (1, 2, 4, 8, 16, 20, 20 ms
 * apart: a closed sandbox's processes are usually gone within a few ms of its close, and a first
 * pause of 20 ms made half the closes take 21 ms).
 */
const QUICK_REMOVAL_ATTEMPTS = 8;
/** The background's tries and their pause: 30 s in all. */
const LINGERING_REMOVAL_ATTEMPTS = 150;
const LINGERING_REMOVAL_PAUSE_MS = 200;
const lingeringRemovals = new Set<Promise<boolean>>();

/** Settles once the groups being removed in the background are removed or given up. */
export async function lingeringRemovalsSettled(): Promise<void> {
  await Promise.all([...lingeringRemovals]);
}

/**
 * Kills the processes of a group's directories and removes them (up to `attempts` tries each, the
 * pauses between them doubling from 1 ms up to `pauseMs`); true when none is left.
 */
export async function removeGroup(dirs: string[], attempts = 50, pauseMs = 20): Promise<boolean> {
  let removed = true;
  for (const dir of new Set(dirs)) {
    let gone = false;
    for (let attempt = 0; attempt < attempts && !gone; attempt++) {
      const pids = readKernelFile(join(dir, 'cgroup.procs')) ?? '';
      for (const pid of pids.split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // Gone meanwhile.
        }
      }
      try {
        rmdirSync(dir);
        gone = true;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') gone = true;
        // EBUSY while the killed processes are still being reaped.
        else if (attempt + 1 < attempts) {
          await new Promise((r) => setTimeout(r, Math.min(pauseMs, 2 ** attempt)));
        }
      }
    }
    removed &&= gone;
  }
  return removed;
}

/** Where the sandboxes' groups are listed: the parent group (v1: in the memory hierarchy). */
export function sandboxGroupsDir(version: 1 | 2): string {
  return version === 2 ? join(ROOT, GROUP) : join(ROOT, 'memory', GROUP);
}

/** The directories of one sandbox's group: one on v2, memory/pids/cpu on v1. */
export function groupDirs(
  version: 1 | 2,
  name: string,
): { memory: string; pids: string; cpu: string } {
  if (version === 2) {
    const dir = join(ROOT, GROUP, name);
    return { memory: dir, pids: dir, cpu: dir };
  }
  return {
    memory: join(ROOT, 'memory', GROUP, name),
    pids: join(ROOT, 'pids', GROUP, name),
    cpu: join(ROOT, 'cpu', GROUP, name),
  };
}

let detected: Promise<1 | 2 | null> | undefined;

/** Which cgroup version this machine lets us write, once per process. */
export function cgroupVersion(): Promise<1 | 2 | null> {
  detected ??= (async () => {
    const writable = (path: string) =>
      access(path, 2 /* W_OK */).then(
        () => true,
        () => false,
      );
    const controllers = await readFile(join(ROOT, 'cgroup.controllers'), 'utf8').catch(() => null);
    if (controllers !== null) {
      const needed = ['memory', 'pids', 'cpu'].every((c) => controllers.split(/\s+/).includes(c));
      return needed && (await writable(ROOT)) ? 2 : null;
    }
    const v1 = ['memory', 'pids', 'cpu'].map((c) => join(ROOT, c));
    for (const dir of v1) if (!(await writable(dir))) return null;
    return 1;
  })();
  return detected;
}

/** On v2 the controllers must be enabled down to the group's parent. */
async function enableV2Controllers(): Promise<void> {
  await mkdir(join(ROOT, GROUP), { recursive: true });
  for (const dir of [ROOT, join(ROOT, GROUP)]) {
    await writeFile(join(dir, 'cgroup.subtree_control'), '+memory +pids +cpu').catch(
      () => undefined,
    );
  }
}

let weighted: Promise<void> | undefined;

function weighSandboxesGroupOnce(version: 1 | 2): Promise<void> {
  return (weighted ??= weighSandboxesGroup(version));
}

/**
 * The sandboxes' parent group (`/ambient`), made and given its CPU weight, for sandboxes whose
 * groups another program makes (docker's containers, see DockerHost.cgroupParent); null where
 * this process cannot write the cgroup tree.
 */
export async function sandboxesParentGroup(): Promise<string | null> {
  const version = await cgroupVersion();
  if (!version) return null;
  try {
    if (version === 2) await enableV2Controllers();
    else await mkdir(join(ROOT, 'cpu', GROUP), { recursive: true });
    await weighSandboxesGroupOnce(version);
    return `/${GROUP}`;
  } catch {
    return null;
  }
}

/** Gives the sandboxes' parent group its CPU weight, once per process (best effort). */
async function weighSandboxesGroup(version: 1 | 2): Promise<void> {
  const [file, value] =
    version === 2
      ? [join(ROOT, GROUP, 'cpu.weight'), SANDBOXES_CPU_WEIGHT.v2Weight]
      : [join(ROOT, 'cpu', GROUP, 'cpu.shares'), SANDBOXES_CPU_WEIGHT.v1Shares];
  await writeFile(file, String(value)).catch(() => undefined);
}

function counter(file: string, name: string): number {
  const text = readKernelFile(file) ?? '';
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

/** Whether sandboxes here can have memory, pids and CPU limits. */
export async function cgroupLimitsAvailable(): Promise<boolean> {
  return (await cgroupVersion()) !== null;
}
