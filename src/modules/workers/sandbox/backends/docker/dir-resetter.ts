import { join } from 'node:path';
import { builtProgramPath } from '../../native-spawner';
import { spawnOffLoop } from '../../off-loop-spawn';
import type { SandboxProcess } from '../../sandbox.types';

const DIR_RESET = join('native', 'build', 'ambient-dir-reset');
let dirReset: string | null | undefined;

/**
 * The compiled reset of a container's /workspace directory (native/dir-reset.c: the extended
 * attributes and ACLs its run could set on it removed, its mode, owner and times as Ambient makes
 * them); null without it, and then no container is reused.
 */
export function dirResetPath(): string | null {
  dirReset ??= builtProgramPath(DIR_RESET);
  return dirReset;
}

/**
 * One `ambient-dir-reset --serve` kept running for every container given back to the pool, so a
 * return costs no process start (it cost as much CPU as the rest of the return on a small VM).
 * Requests are answered in order; one not answered within `timeoutMs` ends the process (the next
 * request starts another) and fails with every request still waiting; after stop(), every request
 * fails.
 */
export class DirResetter {
  private server: SandboxProcess | null = null;
  private stopped = false;
  private readonly waiting: ((ok: boolean) => void)[] = [];
  private unread = '';

  constructor(
    private readonly program: string,
    private readonly timeoutMs: number,
  ) {}

  /** Gives `dir` the mode, owner and nothing else Ambient made it with; true once done. */
  reset(dir: string, mode: number, user: { uid: number; gid: number }): Promise<boolean> {
    if (this.stopped || /[\n\0]/.test(dir)) return Promise.resolve(false);
    const server = this.running();
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => this.restart(server), this.timeoutMs);
      timer.unref();
      this.waiting.push((ok) => {
        clearTimeout(timer);
        resolve(ok);
      });
      server.stdin!.write(`${mode.toString(8)} ${user.uid} ${user.gid} ${dir}\n`);
    });
  }

  /** Ends the server for good (a worker's shutdown): a later request fails. */
  stop(): void {
    this.stopped = true;
    if (this.server) this.restart(this.server);
  }

  private running(): SandboxProcess {
    if (this.server) return this.server;
    const server = spawnOffLoop(this.program, ['--serve'], {
      cwd: '/',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdin: 'pipe',
    });
    server.stdin!.on('error', () => this.restart(server));
    server.stderr.resume();
    server.stdout.on('data', (chunk: Buffer) => {
      if (this.server !== server) return;
      this.unread += chunk.toString('utf8');
      const lines = this.unread.split('\n');
      this.unread = lines.pop()!;
      for (const line of lines) this.waiting.shift()?.(line === 'ok');
    });
    void server.exited.then(() => this.restart(server));
    this.server = server;
    return server;
  }

  /** Ends `server` if it is still the current one, failing every request it has not answered. */
  private restart(server: SandboxProcess): void {
    if (this.server !== server) return;
    this.server = null;
    this.unread = '';
    server.kill();
    for (const answer of this.waiting.splice(0)) answer(false);
  }
}
