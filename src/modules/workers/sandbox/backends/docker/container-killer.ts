import { constants as fsConstants } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { join } from 'node:path';

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
 * at once, and the container is left idle for its removal in the background. `<container>` is
 * its hostname (docker's short container id): the killer of a container that replaced this one
 * on the same directories (a crashed process's) ignores it. Arguments:
 * $1 this script; at the container's start only, $2 the launcher's script and $3 the name of its
 * FIFO (made anew with the directories, so a sandbox whose container was replaced under the same
 * name, a crashed process's, can never reach the new one's launcher): the launcher is started in
 * the background when that FIFO is there (see container-launcher.ts).
 */
export const KILLER_DIR = '/run/ambient-killer';
export const KILL_FIFO = 'kill';
const KILL_ALL = 'all';
/** A container's hostname: the first characters of its id. */
const SHORT_ID_LENGTH = 12;
export const KILLER = [
  `if [ -n "$2" ] && [ -p "${KILLER_DIR}/$3" ]; then`,
  `  /bin/sh -c "$2" ambient-launcher ${KILLER_DIR} "$3" "$2" </dev/null >/dev/null 2>&1 &`,
  'fi',
  `exec 3<>${KILLER_DIR}/${KILL_FIFO}`,
  `trap 'exec /bin/sh -c "$1" ambient-killer "$1"' EXIT`,
  'read -r self </etc/hostname',
  'while read -r pgid of <&3; do',
  `  case $pgid in ${KILL_ALL}) [ -n "$self" ] && [ "$of" = "$self" ] && kill -9 -1; continue ;; esac`,
  '  case $pgid in "" | *[!0-9]* | 0 | 1 | "$$") continue ;; esac',
  '  kill -9 "-$pgid" 2>/dev/null',
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
