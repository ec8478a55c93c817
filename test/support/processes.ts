import { readFileSync } from 'node:fs';

/** Whether a process still runs (a zombie or a missing process does not). Linux /proc only. */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
