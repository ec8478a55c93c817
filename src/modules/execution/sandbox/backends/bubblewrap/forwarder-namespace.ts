import { readlinkSync } from 'node:fs';
import { spawnOffLoop } from '../../off-loop-spawn';
import type { SandboxProcess } from '../../sandbox.types';

/** How long the holder may take to report its namespaces (bwrap writes them before exec). */
const START_TIMEOUT_MS = 10_000;

/**
 * An execution's network namespace, made once when its sandbox opens and held by its forwarders
 * (a bwrap whose only processes are socat listening on the sandbox's loopback: the API's and, for
 * `egress` and `allowlist`, the egress proxy's). Each command enters it (`nsenter --user --net`,
 * then its own bwrap for every other namespace): the forwarders start once per execution, during
 * the model's first turn, instead of before every command. The namespace has only its loopback,
 * shared by the execution's own processes, in every network mode.
 */
export class ForwarderNamespace {
  private constructor(
    private readonly holder: SandboxProcess,
    readonly pid: number,
    /** `net:[inode]` of the namespace, to make sure `pid` still holds it. */
    private readonly netns: string,
  ) {}

  /**
   * Starts `sh args…` (which must exec `bwrap --info-fd 1 … -- <forwarders>`) and waits for bwrap's
   * report of the sandbox's pid and network namespace; null when it did not start.
   */
  static async start(
    args: string[],
    env: Record<string, string>,
  ): Promise<ForwarderNamespace | null> {
    const holder = spawnOffLoop('/bin/sh', args, { cwd: '/', env, stdin: 'ignore' });
    holder.stderr.resume();
    const info = await new Promise<{ pid: number; net: number } | null>((resolve) => {
      let text = '';
      const timer = setTimeout(() => resolve(null), START_TIMEOUT_MS);
      const done = (value: { pid: number; net: number } | null) => {
        clearTimeout(timer);
        holder.stdout.removeAllListeners('data');
        holder.stdout.resume();
        resolve(value);
      };
      holder.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const end = text.indexOf('}');
        if (end < 0) return;
        try {
          const parsed = JSON.parse(text.slice(0, end + 1)) as Record<string, unknown>;
          const pid = parsed['child-pid'];
          const net = parsed['net-namespace'];
          done(typeof pid === 'number' && typeof net === 'number' ? { pid, net } : null);
        } catch {
          done(null);
        }
      });
      void holder.exited.then(() => done(null));
    });
    if (!info) {
      holder.kill();
      return null;
    }
    return new ForwarderNamespace(holder, info.pid, `net:[${info.net}]`);
  }

  /**
   * `nsenter` arguments that put a process into the namespace; null once the holder is gone
   * (its pid is checked to still hold this very namespace, never another process's).
   */
  enterArgs(nsenter: string): string[] | null {
    let current: string;
    try {
      current = readlinkSync(`/proc/${this.pid}/ns/net`);
    } catch {
      return null;
    }
    if (current !== this.netns) return null;
    return [nsenter, `--target=${this.pid}`, '--user', '--net', '--preserve-credentials', '--'];
  }

  /** Kills the forwarder and its namespace; settles once it has exited (its cgroup is empty). */
  async stop(): Promise<void> {
    this.holder.kill();
    await this.holder.exited;
  }
}
