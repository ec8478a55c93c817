import { constants as fsConstants, open as openFd, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import type { SandboxExit, SandboxProcess } from '../../sandbox.types';
import { SandboxSpawner } from '../../sandbox-spawner';

/**
 * A container's compiled spawner: what its launcher (container-launcher.ts) becomes where the
 * container has the helper bound and the host made this FIFO beside the launcher's. The launcher's
 * shell then execs `ambient-spawner --sandbox --as <uid> <gid>` as root, with the launcher's FIFO
 * (held read-write) as its requests and this one as its events; it forks each command under a
 * root supervisor, and the command gives up root before its exec (see native/spawner.c). A
 * command then costs the container one fork and one exec, where the shell launcher's script,
 * its FIFOs and its handshake cost three forks and as many execs.
 */
export function spawnerEventsFifo(launchFifo: string): string {
  return `${launchFifo}.events`;
}

/** How long the spawner may take to say it is ready (a loaded host, a container just started). */
export const SPAWNER_READY_MS = 5000;

/** A channel being opened or open; `abort` closes this host's ends at once. */
interface Channel {
  spawner: Promise<SandboxSpawner | null>;
  abort: () => void;
}

/** Opened channels, by `<killer dir>/<launcher FIFO>`: one per spawner process. */
const channels = new Map<string, Channel>();

/**
 * The spawner of the container whose killer directory on this host is `hostDir` and launcher's
 * FIFO `fifo`, opened once and shared until forgotten (a returned container's next run uses the
 * channel its emptying opened). Null when the container has none (no events FIFO: a shell
 * launcher) or it did not say it is ready within `timeoutMs`: commands then go to `docker exec`.
 */
export function containerSpawner(
  hostDir: string,
  fifo: string,
  timeoutMs = SPAWNER_READY_MS,
): Promise<SandboxSpawner | null> {
  const key = join(hostDir, fifo);
  let channel = channels.get(key);
  if (!channel) {
    channel = openSpawner(hostDir, fifo, timeoutMs);
    channels.set(key, channel);
  }
  return channel.spawner;
}

/**
 * Closes this host's ends of the channel to a spawner whose container's processes were killed (a
 * sandbox's close) or that is removed: what it still ran is reported ended.
 */
export async function forgetContainerSpawner(hostDir: string, fifo: string): Promise<void> {
  const key = join(hostDir, fifo);
  const channel = channels.get(key);
  channels.delete(key);
  if (!channel) return;
  // At once, even while it waits to say it is ready: a launcher started anew on the same FIFOs (a
  // pooled container's return) must not find this reader and send its word to it.
  channel.abort();
  await (await channel.spawner)?.close();
}

/** Forgets every channel of a killer directory being removed. */
export async function forgetContainerSpawners(hostDir: string): Promise<void> {
  const prefix = join(hostDir, '/');
  const keys = [...channels.keys()].filter((key) => key.startsWith(prefix));
  await Promise.all(keys.map((key) => forgetContainerSpawner(hostDir, key.slice(prefix.length))));
}

function openSpawner(hostDir: string, fifo: string, timeoutMs: number): Channel {
  let aborted = false;
  let abortOpen = (): void => undefined;
  const spawner = (async () => {
    let events: Socket;
    try {
      // Read end first, non-blocking: the launcher's open of the write end waits for it, and an
      // end is reported only once the spawner (its only writer) came and went. Synchronous, so
      // that an abort finds it.
      const fd = openSync(
        join(hostDir, spawnerEventsFifo(fifo)),
        fsConstants.O_RDONLY | fsConstants.O_NONBLOCK,
      );
      events = new Socket({ fd, readable: true, writable: false });
    } catch (_error) {
      return null;
    }
    const started = await startOn(events, hostDir, fifo, timeoutMs, (abort) => (abortOpen = abort));
    if (aborted) {
      await started?.close();
      return null;
    }
    return started;
  })();
  return {
    spawner,
    abort: () => {
      aborted = true;
      abortOpen();
    },
  };
}

/** The helper on the events FIFO read by `events`, once it said it is ready (else null). */
async function startOn(
  events: Socket,
  hostDir: string,
  fifo: string,
  timeoutMs: number,
  onAbort: (abort: () => void) => void,
): Promise<SandboxSpawner | null> {
  const requests = new PassThrough();
  let writer: Socket | null = null;
  const exited = new Promise<SandboxExit>((resolve) => {
    const ended = (): void => resolve({ code: null, signal: null });
    events.once('close', ended);
    events.once('end', () => events.destroy());
    events.on('error', () => events.destroy());
  });
  const stderr = new PassThrough();
  stderr.end();
  const helper: SandboxProcess = {
    stdin: requests,
    stdout: events,
    stderr,
    exited,
    // This host cannot signal the container's root processes: its ends close, and the spawner
    // goes with the container's other processes (the killer's `all`) or at its next write.
    kill: () => {
      requests.unpipe();
      writer?.destroy();
      events.destroy();
    },
  };
  onAbort(helper.kill);
  const started = await SandboxSpawner.start(helper, timeoutMs);
  if (!(started instanceof SandboxSpawner)) return null;
  try {
    // The spawner holds its requests FIFO open read-write: opened now, the write end never waits.
    const fd = await promisify(openFd)(
      join(hostDir, fifo),
      fsConstants.O_WRONLY | fsConstants.O_NONBLOCK,
    );
    writer = new Socket({ fd, readable: false, writable: true });
    writer.on('error', () => helper.kill());
    requests.pipe(writer);
  } catch (_error) {
    await started.close();
    return null;
  }
  return started;
}
