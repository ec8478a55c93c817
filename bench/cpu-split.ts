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
  /** Its children it has reaped (sandbox processes: sh, bwrap, socat, slirp4netns, nsenter…). */
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

/** utime, stime, cutime and cstime (ms) of a /proc/<pid>/stat file. */
function statTimes(path: string): { utime: number; stime: number; cutime: number; cstime: number } {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map(
    (i) => Number(fields[i]) * CLOCK_TICK_MS,
  );
  return { utime, stime, cutime, cstime };
}

function daemonsMs(): Map<string, UserSystemMs> {
  const cpu = new Map<string, UserSystemMs>();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!isDockerDaemon(readFileSync(`/proc/${pid}/comm`, 'utf8').trim())) continue;
      const t = statTimes(`/proc/${pid}/stat`);
      cpu.set(pid, { userMs: t.utime + t.cutime, systemMs: t.stime + t.cstime });
    } catch {
      // Gone meanwhile.
    }
  }
  return cpu;
}

function childrenMs(): UserSystemMs {
  const t = statTimes('/proc/self/stat');
  return { userMs: t.cutime, systemMs: t.cstime };
}

/**
 * Starts watching; the function returned gives the CPU used since, split into user and system
 * time for this process, its reaped children and the docker daemons. Null off Linux.
 */
export function watchCpuSplit(): () => CpuSplit | null {
  try {
    const service = process.cpuUsage();
    const children = childrenMs();
    const daemons = daemonsMs();
    return () => {
      const used = process.cpuUsage(service);
      const childrenNow = childrenMs();
      const daemonsNow = { userMs: 0, systemMs: 0 };
      for (const [pid, now] of daemonsMs()) {
        const before = daemons.get(pid) ?? { userMs: 0, systemMs: 0 };
        daemonsNow.userMs += Math.max(0, now.userMs - before.userMs);
        daemonsNow.systemMs += Math.max(0, now.systemMs - before.systemMs);
      }
      return {
        service: { userMs: used.user / 1000, systemMs: used.system / 1000 },
        children: {
          userMs: childrenNow.userMs - children.userMs,
          systemMs: childrenNow.systemMs - children.systemMs,
        },
        daemons: daemonsNow,
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
