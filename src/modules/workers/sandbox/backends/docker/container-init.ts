import { readFileSync } from 'node:fs';
import { startTimeOf } from './pool-owner';

/** A running container's init (docker-init) as a process of this host. */
export interface ContainerInit {
  pid: number;
  /** Its start time (see startTimeOf): tells it from a later process given the same pid. */
  startTime: string;
}

/** The container's init at `pid` (State.Pid of a running container), or null when it is gone. */
export function containerInit(pid: number): ContainerInit | null {
  const startTime = pid > 0 ? startTimeOf(pid) : null;
  return startTime === null ? null : { pid, startTime };
}

/**
 * Kills every process of the container at once, without the daemon: SIGKILL to its init, the
 * init of the container's pid namespace, makes the kernel kill every other process in it. Sent
 * only while that pid still has the init's start time (once the container ended, its pid may be
 * another process's). True when the container's processes are gone or going; false when this
 * process may not signal its init (then the daemon must stop it).
 */
export function killContainerInit(init: ContainerInit): boolean {
  if (startTimeOf(init.pid) !== init.startTime) return true;
  try {
    process.kill(init.pid, 'SIGKILL');
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Whether the container's init still runs: one read of /proc (tens of microseconds). An init that
 * is exiting (a zombie, its namespace's processes being killed) does not.
 */
export function containerInitAlive(init: ContainerInit): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${init.pid}/stat`, 'utf8');
  } catch (_error) {
    return false;
  }
  // After the command name (in parentheses, may hold spaces): the state, then (field 22) the
  // start time, as startTimeOf reads it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return !/^[ZX]$/.test(fields[0]) && fields[19] === init.startTime;
}
