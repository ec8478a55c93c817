import { startTimeOf } from './backends/docker/pool-owner';

let ownStartTime: string | null = null;

/**
 * `.<pid>.<start time>` of this process: the suffix of the sandbox cgroups it makes. The start
 * time is read once it could be read (a `.0` suffix would make this process's groups look like a
 * dead one's to another worker's sweep).
 */
export function cgroupOwnerSuffix(): string {
  ownStartTime ??= startTimeOf(process.pid);
  return `.${process.pid}.${ownStartTime ?? '0'}`;
}

/**
 * The owner named by a sandbox cgroup's name (`<run>-<execution>.<pid>.<start time>`), or null
 * for a name without one (not a sandbox group).
 */
export function cgroupOwnerOf(name: string): { pid: number; startTime: string } | null {
  const match = /\.(\d+)\.(\d+)$/.exec(name);
  return match ? { pid: Number(match[1]), startTime: match[2] } : null;
}

/** Whether the process that made a group still runs (same pid and start time: not a reuse). */
export function cgroupOwnerIsAlive(owner: { pid: number; startTime: string }): boolean {
  return startTimeOf(owner.pid) === owner.startTime;
}
