import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Who made a pooled container: `host/boot id/pid/start time` of the process. Pooled containers
 * carry no run (they are made before one asks), so the orphan sweep judges them by whether their
 * maker still lives: a process of this host and boot with that pid and start time.
 */
export function currentPoolOwner(): string {
  return [hostname(), bootId(), process.pid, startTimeOf(process.pid) ?? '?'].join('/');
}

/**
 * Whether the process that made a pooled container still runs. The owner of another host (a
 * daemon shared across hosts) cannot be checked from here and counts as alive: its own sweep
 * judges it.
 */
export function poolOwnerIsAlive(owner: string): boolean {
  const [host, boot, pid, startTime] = owner.split('/');
  if (host !== hostname()) return true;
  if (boot !== bootId()) return false;
  return /^\d+$/.test(pid ?? '') && startTimeOf(Number(pid)) === startTime;
}

function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch (_error) {
    return 'unknown';
  }
}

/** Field 22 of /proc/<pid>/stat (clock ticks since boot): tells a reused pid from its first. */
export function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch (_error) {
    return null;
  }
}
