import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICK_MS = 10; // USER_HZ is 100 on every Linux the bench targets
/** The services the bench itself drives; their CPU counts as the bench's, not as a neighbour's. */
const BENCH_SERVICES = new Set(['mariadbd', 'mysqld', 'redis-server']);

/** utime + stime (ms) of a /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat file. */
function statCpuMs(path: string): number {
  const stat = readFileSync(path, 'utf8');
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
}

/**
 * CPU time (user + system, ms) used so far by this process's main thread, which serves the app
 * under test; null off Linux. Unlike wall time it does not grow when other processes take the CPU.
 */
export function mainThreadCpuMs(): number | null {
  try {
    return statCpuMs(`/proc/self/task/${process.pid}/stat`);
  } catch {
    return null;
  }
}

/** CPU time (ms) of the thread calling it (a worker's own, say); null off Linux. */
export function ownThreadCpuMs(): number | null {
  try {
    return statCpuMs('/proc/thread-self/stat');
  } catch {
    return null;
  }
}

/** CPU time (ms) of this whole process: every thread, live or ended; null off Linux. */
export function processCpuMs(): number | null {
  try {
    return statCpuMs('/proc/self/stat');
  } catch {
    return null;
  }
}

function servicePids(): string[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return BENCH_SERVICES.has(readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
      } catch {
        return false;
      }
    });
}

/**
 * CPU time (ms) used so far by MariaDB/MySQL and Redis together, and the machine's idle time
 * (ms, all CPUs): what the server under test makes its services spend, and what was left over.
 */
export function servicesAndIdleMs(): { servicesMs: number; idleMs: number } | null {
  try {
    let servicesMs = 0;
    for (const pid of servicePids()) {
      try {
        servicesMs += statCpuMs(`/proc/${pid}/stat`);
      } catch {
        // The service restarted; its CPU is simply not counted.
      }
    }
    const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1, 6);
    const [, , , idle, iowait] = ticks.map(Number);
    return { servicesMs, idleMs: (idle + iowait) * CLOCK_TICK_MS };
  } catch {
    return null;
  }
}

interface CpuSnapshot {
  atMs: number;
  busyMs: number;
  benchMs: number;
}

function snapshot(pids: string[]): CpuSnapshot {
  // First line of /proc/stat: user nice system idle iowait irq softirq steal … in ticks, all CPUs.
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1, 9);
  const [user, nice, system, , , irq, softirq] = ticks.map(Number);
  let benchMs = statCpuMs('/proc/self/stat');
  for (const pid of pids) {
    try {
      benchMs += statCpuMs(`/proc/${pid}/stat`);
    } catch {
      // The service restarted; its CPU is simply not counted.
    }
  }
  const busyMs = (user + nice + system + irq + softirq) * CLOCK_TICK_MS;
  return { atMs: performance.now(), busyMs, benchMs };
}

/**
 * Watches how much CPU other processes take while the bench runs: all CPU time on the machine
 * minus the bench process's and its database's and Redis's (whose work for other clients is
 * thereby missed). Returns a function giving the average number of cores they used; null off Linux.
 */
export function watchNeighbourCpu(): () => number | null {
  try {
    const pids = servicePids();
    const start = snapshot(pids);
    return () => {
      const end = snapshot(pids);
      const neighbourMs = end.busyMs - start.busyMs - (end.benchMs - start.benchMs);
      return Math.max(0, neighbourMs) / (end.atMs - start.atMs);
    };
  } catch {
    return () => null;
  }
}

/** utime + stime + cutime + cstime (ms) of every process whose command name `named` accepts. */
function cpuOfProcessesMs(named: (comm: string) => boolean): Map<string, number> {
  const cpu = new Map<string, number>();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!named(readFileSync(`/proc/${pid}/comm`, 'utf8').trim())) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
      cpu.set(pid, ticks * CLOCK_TICK_MS);
    } catch {
      // Gone meanwhile.
    }
  }
  return cpu;
}

/**
 * Watches the CPU time (ms, with their reaped children's) of the processes whose command name
 * `named` accepts: those alive at the end, from the start or from 0 when they started since.
 * Those that ended meanwhile are missed. Null off Linux.
 */
export function watchProcessesCpu(named: (comm: string) => boolean): () => number | null {
  try {
    const start = cpuOfProcessesMs(named);
    return () => {
      let ms = 0;
      for (const [pid, now] of cpuOfProcessesMs(named))
        ms += Math.max(0, now - (start.get(pid) ?? 0));
      return ms;
    };
  } catch {
    return () => null;
  }
}

/** CPU time (ms) of MariaDB (or MySQL) and of Redis. */
export interface StoresCpu {
  databaseMs: number;
  redisMs: number;
}

/** Watches MariaDB's and Redis's CPU from now on (see watchProcessesCpu); null off Linux. */
export function watchStoresCpu(): () => StoresCpu | null {
  const database = watchProcessesCpu((comm) => comm === 'mariadbd' || comm === 'mysqld');
  const redis = watchProcessesCpu((comm) => comm === 'redis-server');
  return () => {
    const [databaseMs, redisMs] = [database(), redis()];
    return databaseMs === null || redisMs === null ? null : { databaseMs, redisMs };
  };
}
