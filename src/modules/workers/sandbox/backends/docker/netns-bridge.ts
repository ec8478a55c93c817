import { readFile } from 'node:fs/promises';
import { ApiBridge, procNetPort, SANDBOX_API_PORT } from '../../api-bridge';
import { preparesInChild, spawnOffLoop } from '../../off-loop-spawn';
import { findSandboxForwarder, SandboxForwarder } from '../../sandbox-forwarder';
import type { SandboxProcess } from '../../sandbox.types';

const READY_TIMEOUT_MS = 3000;

/** Looked up once, at the first container's (see findSandboxForwarder). */
let hostForwarder: SandboxForwarder | null | undefined;

/**
 * This host's forwarder (the compiled one, else socat) listening on 127.0.0.1:7171 (the API; 7172 for the egress proxy) inside a
 * container's network namespace (entered by the compiled spawn helper or `nsenter --net`: the image needs nothing of its own),
 * connecting each connection to the socket in the private directory. The API's needs no socket to listen: a warm container gets it before any run (and any
 * API address) is known; connections before the socket exists are refused. Started off the event
 * loop (see spawnOffLoop), as every pooled container gets one.
 */
export class NetnsForwarder {
  private ran = true;

  private constructor(private readonly child: SandboxProcess) {
    void child.exited.then(() => (this.ran = false));
  }

  static async start(
    pid: number,
    socketPath: string,
    port = SANDBOX_API_PORT,
  ): Promise<NetnsForwarder> {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    hostForwarder ??= findSandboxForwarder();
    if (!hostForwarder) {
      throw new Error('no port forwarder on this host (native/build/ambient-forwarder, or socat)');
    }
    const forward = hostForwarder.command([{ port, socketPath }], hostForwarder.hostPath);
    // The compiled spawn helper enters the namespace itself (one exec fewer per container).
    const child = preparesInChild()
      ? spawnOffLoop(forward[0]!, forward.slice(1), {
          cwd: '/',
          env,
          stdin: 'ignore',
          enterNamespacesOf: { pid, user: false },
        })
      : spawnOffLoop('nsenter', [`--net=/proc/${pid}/ns/net`, '--', ...forward], {
          cwd: '/',
          env,
          stdin: 'ignore',
        });
    child.stdout.resume();
    child.stderr.resume();
    try {
      await waitUntilListening(pid, port, child);
    } catch (err) {
      child.kill();
      throw err;
    }
    return new NetnsForwarder(child);
  }

  stop(): void {
    this.child.kill();
  }

  /** Settles once its process has ended (its port in the namespace is free again). */
  get ended(): Promise<void> {
    return this.child.exited.then(() => undefined);
  }

  /** Whether its process still runs (as far as this process has seen). */
  get running(): boolean {
    return this.ran;
  }
}

/**
 * The API bridge of a sandbox with a network namespace of its own for its whole life (a
 * container): the bridge socket, plus the forwarder inside that namespace.
 */
export class NetnsBridge {
  private constructor(
    private readonly bridge: ApiBridge,
    private readonly forwarder: NetnsForwarder,
  ) {}

  static async start(pid: number, socketPath: string, apiUrl: string): Promise<NetnsBridge> {
    const forwarder = await NetnsForwarder.start(pid, socketPath);
    return NetnsBridge.over(forwarder, socketPath, apiUrl);
  }

  /** The bridge over a forwarder already listening (a warm container's). */
  static async over(
    forwarder: NetnsForwarder,
    socketPath: string,
    apiUrl: string,
  ): Promise<NetnsBridge> {
    try {
      return new NetnsBridge(await ApiBridge.listen(socketPath, apiUrl), forwarder);
    } catch (err) {
      forwarder.stop();
      throw err;
    }
  }

  async close(): Promise<void> {
    this.forwarder.stop();
    await this.bridge.close();
  }

  /**
   * Closes the bridge's socket only: connections to the forwarder are refused from now on, as in a
   * warm container before its hand-out; the forwarder is the container's to keep or stop.
   */
  async closeSocket(): Promise<void> {
    await this.bridge.close();
  }

  get netnsForwarder(): NetnsForwarder {
    return this.forwarder;
  }
}

/** Polls the namespace's sockets until the forwarder listens on its loopback. */
async function waitUntilListening(
  pid: number,
  port: number,
  forwarder: SandboxProcess,
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let exited = false;
  void forwarder.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error('the forwarder exited');
    if (await probe(pid, port)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the forwarder did not start listening');
}

async function probe(pid: number, port: number): Promise<boolean> {
  const hexPort = procNetPort(port);
  // /proc/<pid>/net/tcp lists the sockets of that process's network namespace.
  const table = await readFile(`/proc/${pid}/net/tcp`, 'utf8').catch(() => '');
  return table.includes(`:${hexPort} 00000000:0000 0A`);
}
