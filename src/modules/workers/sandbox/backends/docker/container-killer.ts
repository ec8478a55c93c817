import { randomBytes } from 'node:crypto';
import { constants as fsConstants, open as openFd } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The channel to a container's killer: a FIFO in a root-only directory beside the private one,
 * mounted read-only at KILLER_DIR. The container's main process (root, with no capability but
 * CAP_KILL) reads process-group ids from it and kills those groups with the shell's `kill`
 * builtin. It needs no new process to do that, so it still works when a fork bomb has taken every
 * pid of the container's limit — where a `docker exec` cannot even start — and the sandbox's own
 * user can neither open the FIFO nor signal the killer. It never kills group 0 (its own) or 1
 * (every process), nor its own group by number.
 *
 * Should its shell exit anyway, its EXIT trap execs it anew (no new pid needed): the container
 * lives as long as its main process, and a stopped container runs no command at all. The line
 * `all <container>` (KILL_ALL, at the sandbox's close) kills every process of the container but
 * docker-init and the killer itself (`kill -9 -1`): the run's processes and the launcher are gone
 * at once, and the container is left idle, for its removal in the background or its return to
 * the pool (see container-returns.ts). Two more lines serve that return: `check <container>
 * <nonce>` answers on the verdict FIFO what the container still holds (CHECK_LINES), and `launch
 * <container> <fifo>` starts a launcher anew on that FIFO of its directory. `<container>` is its
 * hostname (docker's short container id): the killer of a container that replaced this one on the
 * same directories (a crashed process's) ignores it. Arguments: $1 this script, $2 the launcher's
 * script (kept when the killer starts anew); at the container's start only, $3 the name of the
 * launcher's FIFO (made anew with the directories, so a sandbox whose container was replaced under
 * the same name, a crashed process's, can never reach the new one's launcher): the launcher is
 * started in the background when that FIFO is there (see container-launcher.ts).
 */
export const KILLER_DIR = '/run/ambient-killer';
export const KILL_FIFO = 'kill';
/** Where the killer answers `check` (see KILLER); it holds it open read-write, never waiting. */
export const VERDICT_FIFO = 'verdict';
const KILL_ALL = 'all';
const CHECK = 'check';
const LAUNCH = 'launch';
/** A container's hostname: the first characters of its id. */
const SHORT_ID_LENGTH = 12;
/**
 * The killer's answer to `check <container> <nonce>`, with shell builtins only (it must not need
 * a new process): the nonce, the processes of the container (its own pid namespace's /proc), what
 * is left in its writable places outside the root layer (/tmp, /dev/shm, /dev/mqueue entries and
 * SysV IPC objects; an unreadable list counts as one), and the OOM kills and pids-limit hits of its
 * cgroup so far.
 */
const CHECK_LINES = [
  '    p=0; for f in /proc/[0-9]*; do p=$((p+1)); done',
  '    l=0',
  '    for f in /tmp/* /tmp/.[!.]* /tmp/..?* /dev/shm/* /dev/shm/.[!.]* /dev/shm/..?* /dev/mqueue/* /dev/mqueue/.[!.]* /dev/mqueue/..?*; do',
  '      { [ -e "$f" ] || [ -L "$f" ]; } && l=$((l+1))',
  '    done',
  '    for t in shm msg sem; do',
  '      if [ -r /proc/sysvipc/$t ]; then { read -r h; while read -r h; do l=$((l+1)); done; } </proc/sysvipc/$t; else l=$((l+1)); fi',
  '    done',
  '    c=0',
  '    for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do',
  '      [ -r "$f" ] && while read -r k v; do [ "$k" = oom_kill ] && c=$((c+v)); done <"$f"',
  '    done',
  '    for f in /sys/fs/cgroup/pids/pids.events /sys/fs/cgroup/pids.events; do',
  '      [ -r "$f" ] && while read -r k v; do [ "$k" = max ] && c=$((c+v)); done <"$f"',
  '    done',
  '    echo "$arg $p $l $c" >&4',
];
export const KILLER = [
  `if [ -n "$2" ] && [ -n "$3" ] && [ -p "${KILLER_DIR}/$3" ]; then`,
  `  /bin/sh -c "$2" ambient-launcher ${KILLER_DIR} "$3" "$2" </dev/null >/dev/null 2>&1 &`,
  'fi',
  `exec 3<>${KILLER_DIR}/${KILL_FIFO}`,
  `if [ -p ${KILLER_DIR}/${VERDICT_FIFO} ]; then exec 4<>${KILLER_DIR}/${VERDICT_FIFO}; fi`,
  // The launcher's script is kept for `launch`; its FIFO is not: a re-exec starts none.
  `trap 'exec /bin/sh -c "$1" ambient-killer "$1" "$2"' EXIT`,
  'read -r self </etc/hostname',
  'while read -r word of arg <&3; do',
  '  if [ -n "$self" ] && [ "$of" = "$self" ]; then',
  '    case $word in',
  `      ${KILL_ALL}) kill -9 -1; continue ;;`,
  `      ${CHECK})`,
  ...CHECK_LINES,
  '        continue ;;',
  `      ${LAUNCH})`,
  '        case $arg in launch-*[!0-9a-f]* | launch-) continue ;; launch-*) ;; *) continue ;; esac',
  `        if [ -n "$2" ] && [ -p "${KILLER_DIR}/$arg" ]; then`,
  `          /bin/sh -c "$2" ambient-launcher ${KILLER_DIR} "$arg" "$2" </dev/null >/dev/null 2>&1 &`,
  '        fi',
  '        continue ;;',
  '    esac',
  '  fi',
  '  case $word in "" | *[!0-9]* | 0 | 1 | "$$") continue ;; esac',
  '  kill -9 "-$word" 2>/dev/null',
  'done',
].join('\n');
/** docker-init and the killer (and the launcher): not counted against the sandbox's process limit. */
export function ownPids(withLauncher: boolean): number {
  return withLauncher ? 3 : 2;
}

/** The killer's directory (root only), beside the private directory. */
export function killerDirOf(privateDir: string): string {
  return `${privateDir}.killer`;
}

/** Writes a line to the container's killer (see KILLER); false when none reads its FIFO. */
export async function tellKiller(privateDir: string, word: string): Promise<boolean> {
  try {
    const fifo = await openFile(
      join(killerDirOf(privateDir), KILL_FIFO),
      fsConstants.O_WRONLY | fsConstants.O_NONBLOCK,
    );
    try {
      await fifo.write(`${word}\n`);
      return true;
    } finally {
      await fifo.close();
    }
  } catch (_error) {
    return false;
  }
}

/** The killer's line that kills every process of the container (see KILLER), by its id. */
export function killAllLine(containerId: string): string {
  return `${KILL_ALL} ${containerId.slice(0, SHORT_ID_LENGTH)}`;
}

/** The killer's line that starts a launcher anew on `fifo` (see KILLER). */
export function launchLine(containerId: string, fifo: string): string {
  return `${LAUNCH} ${containerId.slice(0, SHORT_ID_LENGTH)} ${fifo}`;
}

/** What a container holds once its run's processes were killed (see CHECK_LINES). */
export interface KillerCheck {
  /** Processes in its pid namespace: docker-init and the killer when nothing else is left. */
  processes: number;
  /** Entries in /tmp, /dev/shm and /dev/mqueue, and SysV IPC objects. */
  leftovers: number;
  /** OOM kills and pids-limit hits of its cgroup since it was made. */
  limitHits: number;
}

/**
 * Asks the container's killer what it holds (see KILLER's `check`); null when no answer came
 * within `timeoutMs` (no killer reads, or one of a version without `check`).
 */
export async function askKiller(
  privateDir: string,
  containerId: string,
  timeoutMs: number,
): Promise<KillerCheck | null> {
  const nonce = randomBytes(6).toString('hex');
  let socket: Socket;
  try {
    // Non-blocking read end: the killer holds the FIFO open read-write, so it never reports an end.
    const fd = await promisify(openFd)(
      join(killerDirOf(privateDir), VERDICT_FIFO),
      fsConstants.O_RDONLY | fsConstants.O_NONBLOCK,
    );
    socket = new Socket({ fd, readable: true, writable: false });
  } catch (_error) {
    return null;
  }
  try {
    const answer = new Promise<KillerCheck | null>((resolve) => {
      let text = '';
      const timer = setTimeout(() => resolve(null), timeoutMs);
      timer.unref();
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        // Lines of an earlier asker that gave up waiting may come first.
        for (const line of text.split('\n').slice(0, -1)) {
          const [said, ...counts] = line.trim().split(' ');
          if (said !== nonce || counts.length !== 3 || !counts.every((n) => /^\d+$/.test(n))) {
            continue;
          }
          clearTimeout(timer);
          const [processes, leftovers, limitHits] = counts.map(Number);
          resolve({ processes, leftovers, limitHits });
        }
      });
      socket.on('error', () => resolve(null));
    });
    const line = `${CHECK} ${containerId.slice(0, SHORT_ID_LENGTH)} ${nonce}`;
    if (!(await tellKiller(privateDir, line))) return null;
    return await answer;
  } finally {
    socket.destroy();
  }
}
