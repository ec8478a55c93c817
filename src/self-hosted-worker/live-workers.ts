import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTimeOf } from '../modules/workers/sandbox/backends/docker/pool-owner';

const MARK = /^worker\.(\d+)\.(\d+)$/;

/**
 * The self-hosted worker processes of one workspace root on this host, each marked while it runs
 * by a file `worker.<pid>.<start time>` in `dir` (as sandbox cgroups name their maker). The
 * start-up sweep asks it: the containers of workers sharing a worker id carry the same deployment
 * label and nothing of the process that made them, so while another worker is alive none of them
 * may be taken for a dead one's.
 */
export class LiveWorkers {
  private readonly mark: string;

  constructor(private readonly dir: string) {
    this.mark = join(dir, `worker.${process.pid}.${startTimeOf(process.pid) ?? '0'}`);
  }

  /** Marks this process, before it makes any sandbox (and removes dead ones' marks). */
  async markThis(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await writeFile(this.mark, '');
    await this.othersAlive();
  }

  /**
   * Whether another marked process still runs (an unreadable directory: yes); the marks of dead
   * ones are removed.
   */
  async othersAlive(): Promise<boolean> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return true;
    }
    let alive = false;
    for (const name of names) {
      const match = MARK.exec(name);
      if (!match || join(this.dir, name) === this.mark) continue;
      if (processAlive(Number(match[1]), match[2])) alive = true;
      else await rm(join(this.dir, name), { force: true });
    }
    return alive;
  }

  async unmarkThis(): Promise<void> {
    await rm(this.mark, { force: true });
  }
}

/**
 * Same pid and start time (not a reuse); where start times cannot be read (no /proc, or another
 * user's hidden), whether the pid exists at all, which errs towards alive.
 */
function processAlive(pid: number, startTime: string): boolean {
  const now = startTimeOf(pid);
  if (now !== null) return now === startTime;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
