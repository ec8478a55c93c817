import { constants as fsConstants, open as openFd } from 'node:fs';
import { mkdir, open as openFile, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { spawnOffLoop } from '../../off-loop-spawn';

/**
 * Where a container sees Ambient's compiled spawn helper (bound read-only when it was built): its
 * `--as` mode starts a command in one static exec instead of setsid, setpriv, sh and env.
 */
export const LAUNCH_HELPER = '/run/ambient-spawner';

/**
 * The container's command launcher: a root shell started with the container (the killer's
 * sibling, so inside the container's namespaces, cgroup, seccomp profile and capability set) that
 * reads command ids from its FIFO (`launch-<random>`) in the killer's root-only directory. For
 * each id it sources the script `c<id>/run` the host wrote beside it, with the FIFO
 * `c<id>/status` open on fd 4, in a grandchild shell (the launcher never waits on a command;
 * docker-init reaps it).
 *
 * The script (see supervisorScript) first acknowledges the command on fd 4 and waits for the
 * host's word on `c<id>/go`: only then does it open `c<id>/out` and `c<id>/err`, start the command
 * in a session of its own as the sandbox user with no capability left (setsid + setpriv), wait
 * for it and write its wait status to fd 4. The sandbox's user can open none of these: the
 * directory is root's (0700) and every FIFO 0600 root, mounted read-only; the launcher and the
 * scripts run as root, which that user cannot signal or trace.
 *
 * A fork the launcher cannot make (the pids limit is full) ends dash: its EXIT trap then execs
 * the launcher anew (an exec needs no new pid), which closes what the failed command held (fd 4:
 * the host sees that command's status end without an acknowledgement) and reads on. Arguments:
 * $1 the killer's directory, $2 the FIFO's name there, $3 this script.
 */
export const LAUNCHER = launcherScript(null);

/**
 * LAUNCHER, or where the container is to run the compiled spawner instead (`spawnAs`, the sandbox
 * user), a launcher that first becomes it: when the helper is bound and the host made the events
 * FIFO beside the launcher's (see container-spawner.ts), it execs `ambient-spawner --sandbox --as`
 * with the launcher's FIFO read-write as its requests and the events FIFO as its events (whose
 * open waits for the host's reader); else it goes on as LAUNCHER.
 */
export function launcherScript(spawnAs: { uid: number; gid: number } | null): string {
  const spawner = spawnAs
    ? [
        `if [ -x ${LAUNCH_HELPER} ] && [ -p "$1/$2.events" ]; then`,
        `  exec ${LAUNCH_HELPER} --sandbox --as ${spawnAs.uid} ${spawnAs.gid} <>"$1/$2" >"$1/$2.events" 2>/dev/null`,
        'fi',
      ]
    : [];
  return [
    ...spawner,
    'command -v setpriv >/dev/null && command -v setsid >/dev/null || exit 0',
    'L=$1',
    'exec 3<>"$L/$2"',
    'exec 4>&- 5>&- 6>&- 7>&-',
    `trap 'exec /bin/sh -c "$3" ambient-launcher "$1" "$2" "$3"' EXIT`,
    'while read -r id <&3; do',
    '  case $id in "" | *[!0-9]*) continue ;; esac',
    // Opened here, not in the child: a fork that fails still leaves the host an end to see (an
    // open that fails ends the shell too, and the trap starts it anew).
    '  exec 4<>"$L/c$id/status"',
    '  ( . "$L/c$id/run" 3<&- </dev/null >/dev/null 2>&1 & )',
    '  exec 4>&-',
    'done',
  ].join('\n');
}

/** The request of one command: what the wrapper of docker-exec-process.ts takes as arguments. */
export interface LaunchRequest {
  /** The wrapper's script and its arguments ($0 first). */
  wrapper: string;
  args: string[];
  uid: number;
  gid: number;
  /**
   * The same, as LAUNCH_HELPER's arguments after `--as <uid> <gid>` (`--wrapper …` or `-- …`):
   * used where the container has the helper, the wrapper otherwise.
   */
  helperArgs?: string[];
}

/** A command handed to the launcher: its output, and its wait status once it has ended. */
export interface LaunchedCommand {
  stdout: Socket;
  stderr: Socket;
  /**
   * True once the command's supervisor runs and waits for the host's word (nothing of the
   * command has run yet); false when it never will (the launcher could not fork for it).
   */
  acknowledged: Promise<boolean>;
  /** Lets the acknowledged supervisor start the command. */
  proceed(): Promise<void>;
  /** Tells the supervisor, now or whenever it comes, not to start the command. */
  cancel(): Promise<void>;
  /** The shell's `$?` of the command (128 + n: signal n); null when no status came. */
  status: Promise<number | null>;
  /** Stops reading and removes the command's directory (its FIFOs). */
  dispose(): Promise<void>;
}

/** A POSIX shell word that is `value`, whatever it holds. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * What the launcher runs as root for one command: acknowledges it (`a` on fd 4, the status FIFO)
 * and waits for the host's word on `go` (held open by the host, so the open never blocks): `go`
 * starts the command, anything else (the host gave up waiting, or the command was killed first)
 * ends the supervisor with nothing run. Then it opens the output FIFOs (so the host sees them end
 * whatever happens next), starts the command as the sandbox user in a session of its own (its
 * process group, which the killer kills), with no capability and no bounding set, closes what the
 * command must not inherit (fd 4: the status FIFO), waits, reports. The command starts through
 * LAUNCH_HELPER where the container has it (containers made without it stay in the pool), else
 * through setsid, setpriv and the wrapper's `sh`.
 */
export function supervisorScript(dirInside: string, request: LaunchRequest): string {
  const d = shellQuote(dirInside);
  const io = '</dev/null >&5 2>&6 5>&- 6>&- 4>&- &';
  const fallback = [
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
  const helped = request.helperArgs
    ? [LAUNCH_HELPER, '--as', String(request.uid), String(request.gid)]
        .concat(request.helperArgs.map(shellQuote))
        .join(' ')
    : null;
  const start = helped
    ? [`if [ -x ${LAUNCH_HELPER} ]; then ${helped} ${io}`, `else ${fallback} ${io}`, 'fi']
    : [`${fallback} ${io}`];
  return [
    `exec 7<${d}/go`,
    'echo a >&4',
    'read -r word <&7',
    'exec 7<&-',
    '[ "$word" = go ] || exit 0',
    `exec 5>${d}/out 6>${d}/err`,
    ...start,
    'exec 5>&- 6>&-',
    'wait $!',
    'echo "$?" >&4',
    '',
  ].join('\n');
}

let sequence = 0;

/**
 * Makes FIFOs (mode 0600) with one `mkfifo`, started off the event loop (see spawnOffLoop): a
 * fork of Ambient itself costs its event loop 10-40 ms on a loaded host, and a pooled container
 * needs two of these.
 */
export async function makeFifos(paths: string[]): Promise<void> {
  const mkfifo = spawnOffLoop('mkfifo', ['-m', '600', '--', ...paths], {
    cwd: '/',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdin: 'ignore',
  });
  const errors: Buffer[] = [];
  mkfifo.stdout.resume();
  mkfifo.stderr.on('data', (chunk: Buffer) => errors.push(chunk));
  const { code, startError } = await mkfifo.exited;
  if (startError) throw startError;
  if (code !== 0) {
    throw new Error(`mkfifo failed: ${Buffer.concat(errors).toString('utf8').trim() || code}`);
  }
}

/** Command directories made ahead, by killer directory (see prepareSlots). */
const spareSlots = new Map<string, string[]>();
/** How many command directories are made at once, ahead of the commands. */
const SLOTS_AHEAD = 4;

/**
 * Makes command directories (`c<id>` with their FIFOs) ahead of the commands, with one `mkfifo`
 * (which also makes `otherFifos`, the container's own, when it is made): called with the
 * container's directories, so a command does not wait for a process of this host. Each is used
 * once, like one made on demand.
 */
export async function prepareSlots(
  hostDir: string,
  count = SLOTS_AHEAD,
  otherFifos: string[] = [],
): Promise<void> {
  const ids = Array.from({ length: count }, () => String(++sequence));
  await Promise.all(ids.map((id) => mkdir(join(hostDir, `c${id}`), { mode: 0o700 })));
  const fifos = ids.flatMap((id) => FIFOS.map((name) => join(hostDir, `c${id}`, name)));
  await makeFifos([...otherFifos, ...fifos]);
  spareSlots.set(hostDir, [...(spareSlots.get(hostDir) ?? []), ...ids]);
}

/** Forgets the directories made ahead for `hostDir` (removed with it). */
export function forgetSlots(hostDir: string): void {
  spareSlots.delete(hostDir);
  forgetCancelled(hostDir);
}

/** The `go` FIFOs of `hostDir`'s cancelled commands closed (see `cancelled`). */
export function forgetCancelled(hostDir: string): void {
  for (const handle of cancelled.get(hostDir) ?? []) void handle.close().catch(() => undefined);
  cancelled.delete(hostDir);
}

/** The command directories made ahead for `hostDir` and not used yet (`c<id>`). */
export function spareSlotNames(hostDir: string): string[] {
  return (spareSlots.get(hostDir) ?? []).map((id) => `c${id}`);
}

/** Each command directory's FIFOs: the host reads the first three and writes `go`. */
const FIFOS = ['out', 'err', 'status', 'go'];
const READ_FIFOS = FIFOS.slice(0, 3);

/**
 * The `go` FIFOs of cancelled commands, by killer directory: kept open until the container's
 * directories go (forgetSlots), so that a supervisor the launcher starts late still finds a
 * writer, reads `no` and ends, instead of waiting in open(2) for one.
 */
const cancelled = new Map<string, FileHandle[]>();

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
  await makeFifos(FIFOS.map((name) => join(hostDir, `c${made}`, name)));
  return made;
}

const refilling = new Set<string>();

/**
 * Hands one command to the launcher of the container whose killer directory is `hostDir` (seen
 * at `insideDir` in the container). Null when no launcher listens there (none was started, or
 * it ended): the caller uses `docker exec` instead. The command starts only once the caller
 * proceeds after its acknowledgement (see supervisorScript).
 */
export async function launch(
  hostDir: string,
  insideDir: string,
  fifo: string,
  request: LaunchRequest,
): Promise<LaunchedCommand | null> {
  const sockets: Socket[] = [];
  let dir: string | null = null;
  let go: FileHandle | null = null;
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
    // Read ends opened non-blocking: they only report an end once a writer came and went.
    for (const name of READ_FIFOS) sockets.push(await readEnd(join(dir, name)));
    // Read and write: the supervisor's open never waits, and what is written stays until it reads.
    go = await openFile(join(dir, 'go'), fsConstants.O_RDWR | fsConstants.O_NONBLOCK);
    if (!(await sendId(join(hostDir, fifo), id))) {
      await go.close();
      await dispose();
      return null;
    }
  } catch (_error) {
    await go?.close().catch(() => undefined);
    await dispose();
    return null;
  }
  const [stdout, stderr, statusSocket] = sockets;
  const word = go;
  let said = false;
  const disposeSockets = dispose;
  const say = async (text: 'go' | 'no'): Promise<void> => {
    if (said) return;
    said = true;
    await word.write(`${text}\n`).catch(() => undefined);
    if (text === 'go') {
      // The supervisor opened `go` before it acknowledged: the word waits there for it.
      await word.close().catch(() => undefined);
    } else {
      cancelled.set(hostDir, [...(cancelled.get(hostDir) ?? []), word]);
    }
  };
  const { acknowledged, status } = statusChannel(statusSocket);
  return {
    stdout,
    stderr,
    acknowledged,
    proceed: () => say('go'),
    cancel: () => say('no'),
    status,
    // Disposed without a word (the sandbox closes meanwhile): the command never starts.
    dispose: async () => {
      await say('no');
      await disposeSockets();
    },
  };
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

/**
 * What the status FIFO says: `a` (the supervisor waits for the host's word), then the command's
 * status. Ended without `a`: the launcher could not fork for the command (its fd 4 closed).
 */
function statusChannel(socket: Socket): {
  acknowledged: Promise<boolean>;
  status: Promise<number | null>;
} {
  let acknowledge: (ok: boolean) => void = () => undefined;
  const acknowledged = new Promise<boolean>((resolve) => (acknowledge = resolve));
  const status = new Promise<number | null>((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (/^a\n/.test(text)) acknowledge(true);
      // The supervisor's last word: no need to wait for the FIFO's end as well.
      const last = /^a\n(\d+)\n/.exec(text);
      if (last) resolve(Number(last[1]));
    });
    const done = (): void => {
      acknowledge(/^a\n/.test(text));
      const last = text.replace(/^a\n/, '').trim();
      resolve(/^\d+$/.test(last) ? Number(last) : null);
    };
    socket.on('end', done);
    socket.on('close', done);
    socket.on('error', () => undefined);
  });
  return { acknowledged, status };
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
