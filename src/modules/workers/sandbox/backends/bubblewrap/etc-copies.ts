import { execFile } from 'node:child_process';
import { lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A copy of the sandbox's /etc, held by one sandbox until it closes. */
export interface EtcCopy {
  /** The directory to bind read-only at /etc. */
  readonly dir: string;
  /** The sandbox is closed: a superseded copy goes once no sandbox holds it. */
  release(): void;
}

interface Generation {
  dir: string;
  /** When it was made, or last found to be what the host's entries still are. */
  madeAt: number;
  holders: number;
  /** What the host's entries were when it was made (see entriesState). */
  state: string;
}

/**
 * The parts of /etc sandboxes see (`entries`, plus generated files such as passwd), copied into
 * one directory that a sandbox binds with one mount instead of one per entry: every mount costs
 * the kernel time at every sandbox start (≈ 3 ms of CPU per bwrap for the 20 entries). A copy is
 * at most `maxAgeMs` old when a sandbox takes it, so the host's changes reach the sandboxes opened
 * after that; a sandbox keeps its copy until it closes (a superseded copy is removed once no
 * sandbox holds it). An old copy whose entries the host has not changed since is kept (its age
 * starts again): looking costs a fraction of a copy (~700 entries on Debian, whose `cp -a` and
 * later removal took 100-125 ms of CPU a minute on a small VM, a look 20-31 ms). Null when no copy can be made: the
 * caller binds the entries one by one.
 */
export class EtcCopies {
  private current: Generation | null = null;
  private making: Promise<Generation | null> | null = null;
  private failedAt = -Infinity;
  private made = 0;
  /** Copies are named `etc-<host>-<pid>-<n>`: a dead process's are recognisable, on this host. */
  private readonly prefix = `etc-${hostname().replace(/[^A-Za-z0-9.]/g, '_')}-`;

  constructor(
    private readonly root: string,
    private readonly entries: readonly string[],
    private readonly generated: Readonly<Record<string, string>>,
    private readonly maxAgeMs = 60_000,
    private readonly hostEtc = '/etc',
  ) {}

  async acquire(): Promise<EtcCopy | null> {
    const now = Date.now();
    let generation = this.current;
    if (!generation || now - generation.madeAt >= this.maxAgeMs) {
      if (now - this.failedAt < this.maxAgeMs) return null;
      generation = await (this.making ??= this.renew().finally(() => (this.making = null)));
      if (!generation) return null;
    }
    generation.holders++;
    let released = false;
    return {
      dir: generation.dir,
      release: () => {
        if (released) return;
        released = true;
        generation.holders--;
        this.removeIfUnused(generation);
      },
    };
  }

  /** The current copy, still young or found unchanged on the host, else a new one. */
  private async renew(): Promise<Generation | null> {
    const current = this.current;
    if (current && Date.now() - current.madeAt < this.maxAgeMs) return current;
    // Looked at before a copy is made: a change during the copy shows at the next look.
    const state = await entriesState(this.hostEtc, this.entries).catch(() => null);
    if (current && state !== null && state === current.state) {
      current.madeAt = Date.now();
      return current;
    }
    return this.make(state ?? '');
  }

  private async make(state: string): Promise<Generation | null> {
    if (this.made === 0) await this.removeDeadProcessesCopies();
    const dir = join(this.root, `${this.prefix}${process.pid}-${++this.made}`);
    const madeAt = Date.now();
    try {
      await mkdir(dir, { recursive: true });
      const present = (
        await Promise.all(
          this.entries.map(async (entry) =>
            (await lstat(join(this.hostEtc, entry)).catch(() => null)) ? entry : null,
          ),
        )
      ).filter((entry): entry is string => entry !== null);
      // `cp -a`: directories whole, symlinks as they are (they resolve inside as on the host).
      if (present.length) {
        await run('cp', ['-a', '--', ...present.map((e) => join(this.hostEtc, e)), dir]);
      }
      for (const [name, content] of Object.entries(this.generated)) {
        await writeFile(join(dir, name), content);
      }
    } catch {
      this.failedAt = Date.now();
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
      return null;
    }
    const previous = this.current;
    const generation = { dir, madeAt, holders: 0, state };
    this.current = generation;
    if (previous) this.removeIfUnused(previous);
    return generation;
  }

  /** Copies left by processes of this host that are gone (a crash, a kill): nobody holds them. */
  private async removeDeadProcessesCopies(): Promise<void> {
    const names = await readdir(this.root).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.startsWith(this.prefix)) continue;
      const pid = Number(name.slice(this.prefix.length).split('-')[0]);
      if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue;
      await rm(join(this.root, name), { recursive: true, force: true }).catch(() => undefined);
    }
  }

  private removeIfUnused(generation: Generation): void {
    if (generation === this.current || generation.holders > 0) return;
    void rm(generation.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * What the host's entries are: every path under them with its inode, change time (ns) and size, or
 * `-` for one that is missing. Any write, rename, chmod or chown of a path moves its ctime, and an
 * entry added to or removed from a directory moves the directory's.
 */
export async function entriesState(hostEtc: string, entries: readonly string[]): Promise<string> {
  const lines: string[] = [];
  const look = async (path: string): Promise<void> => {
    const stat = await lstat(join(hostEtc, path), { bigint: true }).catch(() => null);
    if (!stat) {
      lines.push(`${path} -`);
      return;
    }
    lines.push(`${path} ${stat.ino} ${stat.ctimeNs} ${stat.size}`);
    if (stat.isDirectory()) {
      const names = await readdir(join(hostEtc, path));
      await Promise.all(names.map((name) => look(join(path, name))));
    }
  };
  await Promise.all(entries.map(look));
  return lines.sort().join('\n');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, as another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
