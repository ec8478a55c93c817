import { readdirSync, readFileSync } from 'node:fs';

/** Whether a process still runs (a zombie or a missing process does not). Linux /proc only. */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Host pids of the live processes whose environment holds `name=value` (e.g. a run's
 * AMBIENT_RUN_ID): what a run started, found from outside its sandbox, whose pid namespace hides
 * the pids its processes see.
 */
export function processesWithEnv(name: string, value: string): number[] {
  const needle = `${name}=${value}`;
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (environ.includes(needle) && isRunning(Number(entry))) found.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}

/**
 * Host pids of the live processes whose command line or environment mentions `text` (a run's
 * id): a bubblewrap sandbox's processes bind the run's workspace (named by the run id) and its
 * commands carry AMBIENT_RUN_ID, so none of them escapes this.
 */
export function processesMentioning(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      if ((cmdline.includes(text) || environ.includes(text)) && isRunning(Number(entry))) {
        found.push(Number(entry));
      }
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}
