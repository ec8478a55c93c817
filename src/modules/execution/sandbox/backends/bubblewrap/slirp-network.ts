import { ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/** The resolver slirp4netns answers on inside the namespace. */
export const SLIRP_DNS = '10.0.2.3';

const MTU = 65520;

/**
 * Outbound network for one bubblewrap process (`network: egress`): slirp4netns gives its empty
 * network namespace a user-mode NAT to the outside world. `--disable-host-loopback` keeps the
 * host's loopback services (database, Redis, the service itself) unreachable, and link-local
 * addresses (the cloud metadata service at 169.254.169.254) are routed to nowhere.
 *
 * bwrap reports its child's pid on fd 3 (`--info-fd`) and waits on fd 4 (`--block-fd`) until the
 * network is ready, so the command never runs without it.
 *
 * tap0 is configured here, not with slirp4netns's `--configure`: that also brings `lo` up (the
 * kernel then gives it 127.0.0.1), while bwrap's child, which reported its pid before its own
 * setup, may not yet have added 127.0.0.1 itself; its add then fails (EEXIST) and bwrap exits with
 * `bwrap: loopback: Failed RTM_NEWADDR` before the command runs. `lo` is bwrap's alone.
 */
export class SlirpNetwork {
  private slirp?: ChildProcess;
  private stopped = false;

  private constructor(private readonly sandboxed: ChildProcess) {}

  static attach(child: ChildProcess): SlirpNetwork {
    const network = new SlirpNetwork(child);
    void network.start().catch(() => {
      // Without a network the command must not run at all.
      network.stop();
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    });
    return network;
  }

  stop(): void {
    this.stopped = true;
    this.slirp?.kill('SIGKILL');
  }

  private async start(): Promise<void> {
    const info = this.sandboxed.stdio[3] as Readable;
    const release = this.sandboxed.stdio[4] as Writable;
    // bwrap closes both when it is done with them (or dies): that is no error of ours.
    info.on('error', () => undefined);
    release.on('error', () => undefined);
    const pid = await childPid(info);
    if (this.stopped) return;
    const slirp = spawn(
      'slirp4netns',
      [
        `--mtu=${MTU}`,
        '--disable-host-loopback',
        '--ready-fd=3',
        // By path, not by pid: given a pid, slirp4netns joins the sandbox's user namespace too,
        // and the kernel then refuses the network namespace (bwrap's --dev/--proc mounts).
        '--netns-type=path',
        `/proc/${pid}/ns/net`,
        'tap0',
      ],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
    );
    this.slirp = slirp;
    await new Promise<void>((resolve, reject) => {
      slirp.on('error', reject);
      slirp.on('exit', (code) => reject(new Error(`slirp4netns exited with ${code}`)));
      (slirp.stdio[3] as Readable).once('data', () => resolve());
    });
    await configureTap(pid);
    if (this.stopped) return;
    release.end('go');
  }
}

function childPid(info: Readable): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    info.setEncoding('utf8');
    info.on('data', (chunk: string) => {
      text += chunk;
      // Only a complete object: a chunk may end in the middle of the number.
      const match = /"child-pid"\s*:\s*(\d+)[\s\S]*\}/.exec(text);
      if (match) resolve(Number(match[1]));
    });
    info.on('end', () => reject(new Error('bwrap reported no child pid')));
  });
}

/**
 * What slirp4netns's `--configure` does for tap0 (its default addresses), without touching `lo`;
 * link-local addresses routed to nowhere. Fails (and the command does not run) if any step fails.
 */
function configureTap(pid: number): Promise<void> {
  const steps = [
    `link set tap0 mtu ${MTU} up`,
    'addr add 10.0.2.100/24 dev tap0',
    'route add default via 10.0.2.2 dev tap0',
    'route add prohibit 169.254.0.0/16',
  ];
  return new Promise((resolve, reject) => {
    const ip = spawn('nsenter', [`--net=/proc/${pid}/ns/net`, 'ip', '-batch', '-'], {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    ip.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    ip.stdin.on('error', () => undefined);
    ip.on('error', reject);
    ip.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`tap0 setup failed: ${stderr.trim()}`)),
    );
    ip.stdin.end(steps.join('\n') + '\n');
  });
}
