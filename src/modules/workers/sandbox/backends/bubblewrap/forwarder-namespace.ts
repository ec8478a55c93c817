import { readlinkSync } from 'node:fs';
import { readKernelFile } from '../../kernel-files';
import type { SandboxProcess } from '../../sandbox.types';

/**
 * How long the holder may take to report its namespaces (bwrap writes them before exec), and
 * then for its forwarders to listen.
 */
const START_TIMEOUT_MS = 10_000;
/**
 * Pauses between two looks at the namespace's TCP sockets, growing: a forwarder takes tens of ms
 * to start on a small loaded VM.
 */
const LISTEN_POLL_MS = [10, 20, 40];

/**
 * An execution's network namespace, made once when its sandbox opens and held by its forwarders
 * (the sandbox's loopback ports: the API's and, for `egress` and `allowlist`, the egress proxy's):
 * the compiled forwarder making the namespaces itself, else a bwrap whose only processes forward.
 * Each command enters it (`nsenter --user --net`, then its own bwrap for every other namespace):
 * the forwarders start once per execution, during the model's first turn, instead of before every
 * command. The namespace has only its loopback, shared by the execution's own processes, in every
 * network mode.
 */
export class ForwarderNamespace {
  private constructor(
    private readonly holder: SandboxProcess,
    readonly pid: number,
    /** `net:[inode]` of the namespace, to make sure `pid` still holds it. */
    private readonly netns: string,
  ) {}

  /**
   * Given the started `holder` (`ambient-forwarder -n …`, or a process that becomes
   * `bwrap --info-fd 1 … -- <forwarders>`), waits for its report of the pid and network namespace
   * (the forwarder's own, as bwrap's), then until a forwarder listens for each
   * of `ports` in that namespace (read from the host: /proc/<pid>/net/sockstat); null when it did
   * not start. Once it resolves, the namespace is complete (bwrap reports before it finished
   * setting up its user namespace: a process entering it earlier could be refused a namespace of
   * its own) and commands need not wait for the forwarders, each in a shell of its own.
   */
  static async start(holder: SandboxProcess, ports: number[]): Promise<ForwarderNamespace | null> {
    const started = Date.now();
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
    const listening =
      info !== null &&
      (await listeningOn(info.pid, ports.length, started + START_TIMEOUT_MS, holder.exited));
    if (!info || !listening) {
      holder.kill();
      return null;
    }
    return new ForwarderNamespace(holder, info.pid, `net:[${info.net}]`);
  }

  /**
   * The pid whose user and network namespaces a process enters to be in this one; null once the
   * holder is gone (its pid is checked to still hold this very namespace, never another's).
   */
  enterPid(): number | null {
    return this.holdsNamespace() ? this.pid : null;
  }

  /**
   * Kills the forwarder and its namespace; settles once it has exited (its cgroup is then empty).
   * SIGKILL to the reported pid (the forwarder's parent, which waits for it, or the bwrap
   * sandbox's pid 1) ends the forwarder with it (its parent-death signal, or the end of its pid
   * namespace); the process group goes too, whatever happened to that pid.
   */
  async stop(): Promise<void> {
    if (this.holdsNamespace()) {
      try {
        process.kill(this.pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    this.holder.kill();
    await this.holder.exited;
  }

  /** Whether `pid` is still the holder's (not another process since given its pid). */
  private holdsNamespace(): boolean {
    try {
      return readlinkSync(`/proc/${this.pid}/ns/net`) === this.netns;
    } catch {
      return false;
    }
  }
}

/**
 * Resolves true once the network namespace of `pid` holds as many TCP sockets as there are
 * forwarders (`count`); false at `deadline` or once the holder exited. Until a command runs there,
 * the only TCP sockets of that namespace are the forwarders' listening ones, counted once they
 * listen. Read from the namespace's /proc/net/sockstat, a per-namespace counter: its /proc/net/tcp
 * would say which ports, but the kernel walks its whole socket table for it (~1.5 ms of CPU each
 * look on a small VM, against ~0.5).
 */
async function listeningOn(
  pid: number,
  count: number,
  deadline: number,
  exited: Promise<unknown>,
): Promise<boolean> {
  let ended = false;
  void exited.then(() => (ended = true));
  for (let attempt = 0; !ended && Date.now() < deadline; attempt++) {
    const sockstat = readKernelFile(`/proc/${pid}/net/sockstat`);
    if (sockstat === null) return false;
    const inUse = Number(/^TCP: inuse (\d+)/m.exec(sockstat)?.[1] ?? 0);
    if (inUse >= count) return true;
    const pause = LISTEN_POLL_MS[Math.min(attempt, LISTEN_POLL_MS.length - 1)];
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  return false;
}
