import { existsSync, readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICK_MS = 10; // USER_HZ is 100 on every Linux the bench targets

export interface UserSystemMs {
  userMs: number;
  systemMs: number;
}

/** CPU used during a measurement, by whom: user and system time each. */
export interface CpuSplit {
  /** This process (the service under test, when the bench runs it in-process). */
  service: UserSystemMs;
  /**
   * Its children, live (the off-loop spawn helpers, with the sandbox processes they reaped) and
   * reaped (sh, bwrap, socat, slirp4netns, nsenter…). A child alive at the start and reaped since
   * counts whole.
   */
  children: UserSystemMs;
  /**
   * dockerd, containerd and the containerd shims alive at the end, with the children they reaped
   * (runc, and a container's processes once it exited). Shims that ended meanwhile are missed.
   */
  daemons: UserSystemMs;
  /**
   * The docker containers' own processes (their groups' accounting, see containersMs: cpuacct on
   * v1, cpu.stat on v2, with containers removed meanwhile); zero where no group is found (no
   * docker, or the systemd cgroup driver). Not part of the daemons' figure: what the commands
   * themselves cost.
   */
  containers: UserSystemMs | null;
}

function isDockerDaemon(comm: string): boolean {
  return comm === 'dockerd' || comm === 'containerd' || comm.startsWith('containerd-shim');
}

/** utime, stime, cutime and cstime (ms) of a /proc/<pid>/stat file's content. */
function statTimes(stat: string): { utime: number; stime: number; cutime: number; cstime: number } {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map(
    (i) => Number(fields[i]) * CLOCK_TICK_MS,
  );
  return { utime, stime, cutime, cstime };
}

/** User and system ms (with their reaped children's) of the processes `selected` accepts. */
function processesMs(selected: (comm: string, ppid: number) => boolean): Map<string, UserSystemMs> {
  const cpu = new Map<string, UserSystemMs>();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!selected(comm, ppid)) continue;
      const t = statTimes(stat);
      cpu.set(pid, { userMs: t.utime + t.cutime, systemMs: t.stime + t.cstime });
    } catch {
      // Gone meanwhile.
    }
  }
  return cpu;
}

const daemonsMs = () => processesMs((comm) => isDockerDaemon(comm));
const liveChildrenMs = (exclude: Set<string>) => {
  const live = processesMs((_, ppid) => ppid === process.pid);
  for (const pid of exclude) live.delete(pid);
  return live;
};

/**
 * Groups docker's containers are made in (cgroupfs driver): its own `docker`, or `ambient` where
 * Ambient gives them the sandboxes' group (on cgroup v2 bubblewrap's sandboxes are in it too).
 */
const CONTAINER_GROUPS = ['docker', 'ambient'];

/**
 * User and system ms of the docker containers' processes, from their cgroups (see
 * CONTAINER_GROUPS): the counters include the containers already removed. Zero while no group
 * exists yet (no container made since the daemon started); null without cgroup accounting.
 */
function containersMs(): UserSystemMs | null {
  try {
    const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
    if (!v2 && !existsSync('/sys/fs/cgroup/cpuacct')) return null;
    const sum = { userMs: 0, systemMs: 0 };
    for (const group of CONTAINER_GROUPS) {
      const file = v2
        ? `/sys/fs/cgroup/${group}/cpu.stat`
        : `/sys/fs/cgroup/cpuacct/${group}/cpuacct.stat`;
      if (!existsSync(file)) continue;
      const stat = readFileSync(file, 'utf8');
      const counter = (name: string) =>
        Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(stat)?.[1] ?? 0);
      sum.userMs += v2 ? counter('user_usec') / 1000 : counter('user') * CLOCK_TICK_MS;
      sum.systemMs += v2 ? counter('system_usec') / 1000 : counter('system') * CLOCK_TICK_MS;
    }
    return sum;
  } catch {
    return null;
  }
}

function reapedChildrenMs(): UserSystemMs {
  const t = statTimes(readFileSync('/proc/self/stat', 'utf8'));
  return { userMs: t.cutime, systemMs: t.cstime };
}

/** What `now` adds to `before`, per process (from 0 for those that started since). */
function grown(before: Map<string, UserSystemMs>, now: Map<string, UserSystemMs>): UserSystemMs {
  const sum = { userMs: 0, systemMs: 0 };
  for (const [pid, t] of now) {
    const was = before.get(pid) ?? { userMs: 0, systemMs: 0 };
    sum.userMs += Math.max(0, t.userMs - was.userMs);
    sum.systemMs += Math.max(0, t.systemMs - was.systemMs);
  }
  return sum;
}

/**
 * Starts watching; the function returned gives the CPU used since, split into user and system
 * time for this process, its reaped children, the docker daemons and the containers. `exclude`:
 * child pids that are the bench's own (a client process), not the service's. Null off Linux.
 */
export function watchCpuSplit(exclude: number[] = []): () => CpuSplit | null {
  try {
    const excluded = new Set(exclude.map(String));
    const reaped = reapedChildrenMs();
    const children = liveChildrenMs(excluded);
    const daemons = daemonsMs();
    const containers = containersMs();
    // Last: the looks above read /proc for every process (hundreds beside a warm pool), the
    // bench's own work, not the service's.
    const service = process.cpuUsage();
    return () => {
      const used = process.cpuUsage(service);
      const reapedNow = reapedChildrenMs();
      const live = grown(children, liveChildrenMs(excluded));
      const containersNow = containersMs();
      return {
        service: { userMs: used.user / 1000, systemMs: used.system / 1000 },
        children: {
          userMs: live.userMs + reapedNow.userMs - reaped.userMs,
          systemMs: live.systemMs + reapedNow.systemMs - reaped.systemMs,
        },
        daemons: grown(daemons, daemonsMs()),
        containers:
          containers && containersNow
            ? {
                userMs: containersNow.userMs - containers.userMs,
                systemMs: containersNow.systemMs - containers.systemMs,
              }
            : null,
      };
    };
  } catch {
    return () => null;
  }
}

/** Service, children and daemons together, per unit (ms): the figure the CPU targets bound. */
export function cpuTotal(split: CpuSplit, per: number): number {
  return (
    [split.service, split.children, split.daemons].reduce(
      (sum, t) => sum + t.userMs + t.systemMs,
      0,
    ) / per
  );
}

/**
 * `service 12.3 + 4.5, children …, docker daemons …; total …` per unit (e.g. per run): user +
 * system ms; the containers' own CPU after the total (not in it), where measured.
 */
export function describeCpuSplit(split: CpuSplit | null, per: number, unit: string): string {
  if (!split) return 'CPU: not measurable here';
  const part = (name: string, t: UserSystemMs) =>
    `${name} ${(t.userMs / per).toFixed(1)} + ${(t.systemMs / per).toFixed(1)}`;
  return (
    `CPU per ${unit} (user + system ms): ${part('service', split.service)}, ` +
    `${part('children', split.children)}, ${part('docker daemons', split.daemons)}; ` +
    `total ${cpuTotal(split, per).toFixed(1)}` +
    (split.containers ? `; in containers ${part('', split.containers).trim()}` : '')
  );
}
