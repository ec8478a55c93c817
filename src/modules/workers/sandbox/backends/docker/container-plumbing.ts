import type Dockerode from 'dockerode';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PROXY_SOCKET_NAME, SANDBOX_PROXY_PORT } from '../../../../../common/egress/egress-policy';
import { API_SOCKET_NAME } from '../../api-bridge';
import type { SandboxSpec } from '../../sandbox.types';
import { launcherListens } from './container-launcher';
import { NetnsBridge, NetnsForwarder } from './netns-bridge';

/**
 * The Ambient API inside the container (see ApiBridge): the bridge socket in the private
 * directory, and this host's forwarder listening on 127.0.0.1:7171 in the network namespace of the
 * container's process `pid` (entered by pid; needs a local daemon and root). Null when it cannot
 * be started.
 */
export async function bridgeInto(
  pid: number,
  privateDir: string,
  apiUrl: string,
  forwarder: NetnsForwarder | null = null,
): Promise<NetnsBridge | null> {
  try {
    const socketPath = join(privateDir, API_SOCKET_NAME);
    if (forwarder) return await NetnsBridge.over(forwarder, socketPath, apiUrl);
    if (!pid || !existsSync(`/proc/${pid}/ns/net`)) return null;
    return await NetnsBridge.start(pid, socketPath, apiUrl);
  } catch (_error) {
    return null;
  }
}

/**
 * The execution's egress proxy inside the container: served on the socket in the private
 * directory, and this host's forwarder listening on 127.0.0.1:7172 in the container's network
 * namespace. Null for network none; rejects when it cannot be started (the container must not
 * run without it: it would have no way out at all, and look broken rather than refused).
 */
export async function proxyInto(
  pid: number,
  privateDir: string,
  spec: SandboxSpec,
): Promise<NetnsForwarder | null> {
  if (!spec.egressProxy) return null;
  const socketPath = proxySocketPath(privateDir);
  await spec.egressProxy.listen(socketPath);
  return NetnsForwarder.start(pid, socketPath, SANDBOX_PROXY_PORT);
}

/**
 * Where an execution's egress proxy listens in its container's private directory: a name of its
 * own per execution, since the proxy of the container's previous run (see container-returns.ts)
 * may still be shutting down, and removes its socket when it does.
 */
export function proxySocketPath(privateDir: string): string {
  return join(
    privateDir,
    PROXY_SOCKET_NAME.replace(/\.sock$/, `-${randomBytes(6).toString('hex')}.sock`),
  );
}

/** The API forwarder of a warm container (see NetnsForwarder); null when it cannot start. */
export async function forwarderInto(
  pid: number,
  privateDir: string,
): Promise<NetnsForwarder | null> {
  try {
    if (!pid || !existsSync(`/proc/${pid}/ns/net`)) return null;
    return await NetnsForwarder.start(pid, join(privateDir, API_SOCKET_NAME));
  } catch (_error) {
    return null;
  }
}

/** Whether the container runs (one inspect); false when it is gone or the daemon does not say. */
export async function containerRuns(container: Dockerode.Container): Promise<boolean> {
  try {
    return (await container.inspect()).State.Running;
  } catch (_error) {
    return false;
  }
}

/**
 * Waits (3 s at most by default: a loaded host) for a fresh container's launcher, or one started
 * anew (see container-returns.ts), to read its FIFO, so the first commands do not go to
 * `docker exec` for want of it. Pooled containers have
 * theirs long before. Should it never come (an image without setpriv), commands use `docker exec`.
 */
export async function launcherStarted(
  killerDir: string,
  fifo: string,
  timeoutMs = 3000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // From 5 ms, doubling to 100: each look is a failed open(2) and its error on this thread (a
  // burst of closes on a loaded host had looks every 5 ms cost ~5 ms of CPU per container).
  for (let pause = 5; Date.now() < deadline; pause = Math.min(pause * 2, 100)) {
    if (await launcherListens(join(killerDir, fifo))) return;
    await new Promise((r) => setTimeout(r, pause));
  }
}
