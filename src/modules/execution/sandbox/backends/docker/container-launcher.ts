import { execFile } from 'node:child_process';
import { constants as fsConstants, open as openFd } from 'node:fs';
import { mkdir, open as openFile, rm, writeFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The container's command launcher: a root shell started with the container (the killer's
 * sibling, so inside the container's namespaces, cgroup, seccomp profile and capability set) that
 * reads command ids from its FIFO (`launch-<random>`) in the killer's root-only directory. For
 * each id it sources the script `c<id>/run` the host wrote beside it, with the FIFO
 * `c<id>/status` open on fd 4, in a grandchild shell (the launcher never waits on a command;
 * docker-init reaps it).
 *
 * The script (see supervisorScript) opens `c<id>/out` and `c<id>/err`, starts the command in a
 * session of its own as the sandbox user with no capability left (setsid + setpriv), waits for
 * it and writes its wait status to fd 4. The sandbox's user can open none of these: the
 * directory is root's (0700) and every FIFO 0600 root, mounted read-only; the launcher and the
 * scripts run as root, which that user cannot signal or trace.
 *
 * A fork the launcher cannot make (the pids limit is full) ends the launcher: fd 4 then closes
 * without a status, and this and every later command go through `docker exec` instead.
 */
export const LAUNCHER = [
  'command -v setpriv >/dev/null && command -v setsid >/dev/null || exit 0',
  'L=$1',
  'exec 3<>"$L/$2"',
  'while read -r id <&3; do',
  '  case $id in "" | *[!0-9]*) continue ;; esac',
  '  { ( . "$L/c$id/run" 3<&- </dev/null >/dev/null 2>&1 & ) ; } 4<>"$L/c$id/status"',
  'done',
].join('\n');

/** The request of one command: what the wrapper of docker-exec-process.ts takes as arguments. */
export interface LaunchRequest {
  /** The wrapper's script and its arguments ($0 first). */
  wrapper: string;
  args: string[];
  uid: number;
  gid: number;
}

/** A command handed to the launcher: its output, and its wait status once it has ended. */
export interface LaunchedCommand {
  stdout: Socket;
  stderr: Socket;
  /** The shell's `$?` of the command (128 + n: signal n); null when no status came. */
  status: Promise<number | null>;
  /** Stops reading and removes the command's directory (its FIFOs). */
  dispose(): Promise<void>;
}

/** How often a command waiting for its status checks that the launcher is still there. */
const LAUNCHER_CHECK_MS = 500;

/** A POSIX shell word that is `value`, whatever it holds. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * What the launcher runs as root for one command: opens the output FIFOs first (so the host
 * sees them end whatever happens next), starts the command as the sandbox user in a session of
 * its own (its process group, which the killer kills), with no capability and no bounding set,
 * closes what the command must not inherit (fd 4: the status FIFO), waits, reports.
 */
export function supervisorScript(dirInside: string, request: LaunchRequest): string {
  const d = shellQuote(dirInside);
  const command = [
    'setsid',
    'setpriv',
    `--reuid=${request.uid}`,
    `--regid=${request.gid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
    '/bin/sh',
    '-c',
    shellQuote(request.wrapper),
    ...request.args.map(shellQuote),
  ].join(' ');
  return [
    `exec 5>${d}/out 6>${d}/err`,
    `${command} </dev/null >&5 2>&6 5>&- 6>&- 4>&- &`,
    'exec 5>&- 6>&-',
    'wait $!',
    'echo "$?" >&4',
    '',
  ].join('\n');
}

let sequence = 0;

/** Command directories made ahead, by killer directory (see prepareSlots). */
const spareSlots = new Map<string, string[]>();
/** How many command directories are made at once, ahead of the commands. */
const SLOTS_AHEAD = 4;

/**
 * Makes command directories (`c<id>` with their three FIFOs) ahead of the commands, with one
 * `mkfifo`: called with the container's directories, so a command does not wait for a process of
 * this host. Each is used once, like one made on demand.
 */
export async function prepareSlots(hostDir: string, count = SLOTS_AHEAD): Promise<void> {
  const ids = Array.from({ length: count }, () => String(++sequence));
  await Promise.all(ids.map((id) => mkdir(join(hostDir, `c${id}`), { mode: 0o700 })));
  const fifos = ids.flatMap((id) => FIFOS.map((name) => join(hostDir, `c${id}`, name)));
  await promisify(execFile)('mkfifo', ['-m', '600', ...fifos]);
  spareSlots.set(hostDir, [...(spareSlots.get(hostDir) ?? []), ...ids]);
}

/** Forgets the directories made ahead for `hostDir` (removed with it). */
export function forgetSlots(hostDir: string): void {
  spareSlots.delete(hostDir);
}

const FIFOS = ['out', 'err', 'status'];

/** A command directory: one made ahead (then more are made in the background), else a new one. */
async function takeSlot(hostDir: string): Promise<string> {
  const spare = spareSlots.get(hostDir);
  const id = spare?.shift();
  if (spare && spare.length < 2 && !refilling.has(hostDir)) {
    refilling.add(hostDir);
    void prepareSlots(hostDir)
      .catch(() => undefined)
      .finally(() => refilling.delete(hostDir));
  }
  if (id) return id;
  const made = String(++sequence);
  await mkdir(join(hostDir, `c${made}`), { mode: 0o700 });
  await promisify(execFile)('mkfifo', [
    '-m',
    '600',
    ...FIFOS.map((name) => join(hostDir, `c${made}`, name)),
  ]);
  return made;
}

const refilling = new Set<string>();

/**
 * Hands one command to the launcher of the container whose killer directory is `hostDir` (seen
 * at `insideDir` in the container). Null when no launcher listens there (none was started, or
 * it ended): the caller uses `docker exec` instead.
 */
export async function launch(
  hostDir: string,
  insideDir: string,
  fifo: string,
  request: LaunchRequest,
): Promise<LaunchedCommand | null> {
  const sockets: Socket[] = [];
  let dir: string | null = null;
  const dispose = async (): Promise<void> => {
    for (const socket of sockets) socket.destroy();
    if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  };
  try {
    const id = await takeSlot(hostDir);
    dir = join(hostDir, `c${id}`);
    await writeFile(join(dir, 'run'), supervisorScript(`${insideDir}/c${id}`, request), {
      mode: 0o600,
    });
    const fifos = FIFOS.map((name) => join(dir!, name));
    // Read ends opened non-blocking: they only report an end once a writer came and went.
    for (const fifo of fifos) sockets.push(await readEnd(fifo));
    if (!(await sendId(join(hostDir, fifo), id))) {
      await dispose();
      return null;
    }
  } catch (_error) {
    await dispose();
    return null;
  }
  const [stdout, stderr, statusSocket] = sockets;
  const commandDir = dir;
  const status = statusUnlessLauncherEnds(statusOf(statusSocket), join(hostDir, fifo), () =>
    endWaitsForWriters(commandDir),
  );
  return { stdout, stderr, status, dispose };
}

/**
 * The command's status; if the launcher ends first (a fork it could not make: the pids limit is
 * full), this command's supervisor may never have run, and nobody would ever open the FIFOs the
 * host reads. Then `unblock` gives each one a writer that comes and goes: a FIFO still held by
 * the supervisor or the command carries on as before, the others end (no status: null).
 */
async function statusUnlessLauncherEnds(
  status: Promise<number | null>,
  launcherFifo: string,
  unblock: () => Promise<void>,
): Promise<number | null> {
  let settled = false;
  void status.then(() => (settled = true));
  while (!settled) {
    const tick = new Promise((resolve) => setTimeout(resolve, LAUNCHER_CHECK_MS));
    await Promise.race([status, tick]);
    if (settled) break;
    if (!(await launcherListens(launcherFifo))) {
      await unblock();
      break;
    }
  }
  return status;
}

/** Opens and closes each FIFO of a command directory as a writer (see statusUnlessLauncherEnds). */
async function endWaitsForWriters(dir: string): Promise<void> {
  for (const name of FIFOS) {
    try {
      const handle = await openFile(join(dir, name), fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
      await handle.close();
    } catch (_error) {
      // No reader left (the command was disposed): nothing waits.
    }
  }
}

async function readEnd(path: string): Promise<Socket> {
  // A plain descriptor (not a FileHandle): the socket owns it and closes it.
  const fd = await promisify(openFd)(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  return new Socket({ fd, readable: true, writable: false });
}

/** Writes the id to the launcher; false when nobody reads the FIFO (ENXIO: no launcher). */
async function sendId(fifo: string, id: string): Promise<boolean> {
  let handle;
  try {
    handle = await openFile(fifo, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
  } catch (_error) {
    return false;
  }
  try {
    await handle.write(`${id}\n`);
    return true;
  } catch (_error) {
    return false;
  } finally {
    await handle.close();
  }
}

function statusOf(socket: Socket): Promise<number | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const done = (): void => {
      const text = Buffer.concat(chunks).toString('utf8').trim();
      resolve(/^\d+$/.test(text) ? Number(text) : null);
    };
    socket.on('end', done);
    socket.on('close', done);
    socket.on('error', () => undefined);
  });
}

/** Whether a launcher reads the FIFO at `path` (a writer can open it). */
export async function launcherListens(path: string): Promise<boolean> {
  try {
    const handle = await openFile(path, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
    await handle.close();
    return true;
  } catch (_error) {
    return false;
  }
}
