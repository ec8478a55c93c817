import { readdirSync, readFileSync } from 'node:fs';

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
const liveChildrenMs = () => processesMs((_, ppid) => ppid === process.pid);

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
 * time for this process, its reaped children and the docker daemons. Null off Linux.
 */
export function watchCpuSplit(): () => CpuSplit | null {
  try {
    const service = process.cpuUsage();
    const reaped = reapedChildrenMs();
    const children = liveChildrenMs();
    const daemons = daemonsMs();
    return () => {
      const used = process.cpuUsage(service);
      const reapedNow = reapedChildrenMs();
      const live = grown(children, liveChildrenMs());
      return {
        service: { userMs: used.user / 1000, systemMs: used.system / 1000 },
        children: {
          userMs: live.userMs + reapedNow.userMs - reaped.userMs,
          systemMs: live.systemMs + reapedNow.systemMs - reaped.systemMs,
        },
        daemons: grown(daemons, daemonsMs()),
      };
    };
  } catch {
    return () => null;
  }
}

/** `service 12.3 + 4.5 ms, children …, daemons …` per unit (e.g. per run): user + system. */
export function describeCpuSplit(split: CpuSplit | null, per: number, unit: string): string {
  if (!split) return 'CPU: not measurable here';
  const part = (name: string, t: UserSystemMs) =>
    `${name} ${(t.userMs / per).toFixed(1)} + ${(t.systemMs / per).toFixed(1)}`;
  const total =
    [split.service, split.children, split.daemons].reduce(
      (sum, t) => sum + t.userMs + t.systemMs,
      0,
    ) / per;
  return (
    `CPU per ${unit} (user + system ms): ${part('service', split.service)}, ` +
    `${part('children', split.children)}, ${part('docker daemons', split.daemons)}; ` +
    `total ${total.toFixed(1)}`
  );
}
