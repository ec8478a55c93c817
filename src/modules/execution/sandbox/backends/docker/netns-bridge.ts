import { ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { ApiBridge, forwarderArgs, SANDBOX_API_PORT } from '../../api-bridge';

const READY_TIMEOUT_MS = 3000;

/**
 * The API bridge of a sandbox with a network namespace of its own for its whole life (a
 * container): the bridge socket, plus this host's socat listening inside that namespace
 * (`nsenter --net`), so the image needs nothing of its own.
 */
export class NetnsBridge {
  private constructor(
    private readonly bridge: ApiBridge,
    private readonly forwarder: ChildProcess,
  ) {}

  static async start(pid: number, socketPath: string, apiUrl: string): Promise<NetnsBridge> {
    const bridge = await ApiBridge.listen(socketPath, apiUrl);
    const forwarder = spawn(
      'nsenter',
      [`--net=/proc/${pid}/ns/net`, '--', 'socat', ...forwarderArgs(socketPath)],
      { stdio: 'ignore' },
    );
    try {
      await waitUntilListening(pid, forwarder);
    } catch (err) {
      forwarder.kill('SIGKILL');
      await bridge.close();
      throw err;
    }
    return new NetnsBridge(bridge, forwarder);
  }

  async close(): Promise<void> {
    this.forwarder.kill('SIGKILL');
    await this.bridge.close();
  }
}

/** Polls the namespace's sockets until socat listens on its loopback. */
async function waitUntilListening(pid: number, forwarder: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let exited = false;
  forwarder.once('exit', () => (exited = true));
  forwarder.once('error', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error('the API forwarder exited');
    if (await probe(pid)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the API forwarder did not start listening');
}

async function probe(pid: number): Promise<boolean> {
  const hexPort = SANDBOX_API_PORT.toString(16).toUpperCase().padStart(4, '0');
  // /proc/<pid>/net/tcp lists the sockets of that process's network namespace.
  const table = await readFile(`/proc/${pid}/net/tcp`, 'utf8').catch(() => '');
  return table.includes(`:${hexPort} 00000000:0000 0A`);
}
