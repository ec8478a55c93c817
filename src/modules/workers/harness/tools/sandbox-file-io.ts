import { guardProcess } from '../process-group';
import type { ToolScope } from './tool.types';
import { outputEnded } from '../output-grace';

/**
 * The file I/O of read_file, write_file and edit_file, done inside the run's sandbox as the
 * agent's user (the boundary run_command has), never by this service on its host: a process in
 * the sandbox may flip a workspace path between a file and a symlink to a host file at any
 * moment, and only the kernel's view from inside the sandbox makes that harmless. The host-side
 * path check (resolveInWorkspace) stays for clear error messages; it is not what keeps the tools
 * in. Only bash and coreutils are used: they are in the agent image and on the host that
 * bubblewrap shows read-only. On the `process` backend (explicitly unsandboxed) the same
 * scripts run on the host as the service.
 */

/** How long to wait for the output streams to end once the script has exited. */
const OUTPUT_GRACE_MS = 2000;

/** Exit codes of the scripts below that carry a meaning (coreutils use 1 for errors). */
const NOT_FOUND = 3;
const IS_DIRECTORY = 4;
const NOT_REGULAR = 5;

/** Prints at most $2 bytes of $1; says first what makes $1 unreadable as a file. */
const READ_SCRIPT = `
[ -e "$1" ] || exit ${NOT_FOUND}
[ -d "$1" ] && exit ${IS_DIRECTORY}
[ -f "$1" ] || exit ${NOT_REGULAR}
exec head -c "$2" -- "$1"
`;

/** Replaces $1 (always `./…`) with stdin, creating its parent directories when missing. */
const WRITE_SCRIPT = `
[ -d "$1" ] && exit ${IS_DIRECTORY}
[ -d "\${1%/*}" ] || mkdir -p -- "\${1%/*}" || exit 1
exec cat > "$1"
`;

/** A failure of a file tool the model should read (not a bug of the service). */
export class SandboxFileError extends Error {}

/**
 * The first `maxBytes` bytes of the workspace file `relative` (plus one more when it is longer,
 * so the caller can tell), read inside the sandbox.
 */
export async function readInSandbox(
  scope: ToolScope,
  relative: string,
  path: string,
  maxBytes: number,
): Promise<Buffer> {
  const result = await runFileScript(scope, READ_SCRIPT, [relative, String(maxBytes + 1)], {
    maxStdoutBytes: maxBytes + 1,
  });
  if (result.code === NOT_FOUND) throw new SandboxFileError(`${path} does not exist`);
  if (result.code === IS_DIRECTORY) {
    throw new SandboxFileError(`${path} is a directory; use list_files`);
  }
  if (result.code === NOT_REGULAR) throw new SandboxFileError(`${path} is not a regular file`);
  if (result.code !== 0) throw failure('read', path, result);
  return result.stdout;
}

/** Creates or replaces the workspace file `relative` with `content`, inside the sandbox. */
export async function writeInSandbox(
  scope: ToolScope,
  relative: string,
  path: string,
  content: string,
): Promise<void> {
  const result = await runFileScript(scope, WRITE_SCRIPT, [relative], {
    input: Buffer.from(content),
    maxStdoutBytes: 0,
  });
  if (result.code === IS_DIRECTORY) throw new SandboxFileError(`${path} is a directory`);
  if (result.code !== 0) throw failure('write', path, result);
}

interface ScriptResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
}

function failure(verb: 'read' | 'write', path: string, result: ScriptResult): SandboxFileError {
  if (result.timedOut) return new SandboxFileError(`could not ${verb} ${path} in time`);
  if (result.aborted) return new SandboxFileError(`stopped before ${path} could be ${verb}`);
  // "bash: line 3: ./t.txt: Permission denied" → "Permission denied" (the path is the model's own).
  const last = result.stderr.trim().split('\n').at(-1) ?? '';
  const why = last.slice(last.lastIndexOf(': ') + 1).trim();
  return new SandboxFileError(`could not ${verb} ${path}${why ? `: ${why}` : ''}`);
}

/** Runs `bash -c script` in the workspace of the sandbox, with a bounded stdout. */
async function runFileScript(
  scope: ToolScope,
  script: string,
  args: string[],
  options: { input?: Buffer; maxStdoutBytes: number },
): Promise<ScriptResult> {
  const { sandbox } = scope;
  // --norc: with its stdin a socket (a piped write), bash takes itself for an ssh session and
  // would source ~/.bashrc first, which may read that stdin or never return.
  const proc = sandbox.spawn('/bin/bash', ['--norc', '-c', script, 'ambient-file-tool', ...args], {
    env: { PATH: sandbox.path, LC_ALL: 'C' },
    stdin: options.input ? 'pipe' : 'ignore',
  });
  const guard = guardProcess(proc, scope.commandTimeoutSeconds * 1000, scope.signal);
  const stdout: Buffer[] = [];
  let stdoutBytes = 0;
  const stderr: Buffer[] = [];
  proc.stdout.on('data', (chunk: Buffer) => {
    if (stdoutBytes + chunk.length > options.maxStdoutBytes) {
      chunk = chunk.subarray(0, Math.max(0, options.maxStdoutBytes - stdoutBytes));
      proc.kill();
    }
    stdoutBytes += chunk.length;
    stdout.push(chunk);
  });
  proc.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 16) stderr.push(chunk);
  });
  if (proc.stdin) {
    // The script may end before reading everything (a directory): that is not an error here.
    proc.stdin.on('error', () => undefined);
    proc.stdin.end(options.input);
  }
  const ended = Promise.all([proc.stdout, proc.stderr].map(streamEnded));
  const exit = await proc.exited;
  // The output is complete once both streams end; a stream that never does is not waited for.
  await outputEnded(ended, OUTPUT_GRACE_MS);
  proc.kill();
  guard.dispose();
  if (exit.startError) {
    return {
      code: null,
      stdout: Buffer.alloc(0),
      stderr: `bash is not available in the sandbox (${exit.startError.code ?? 'not started'})`,
      timedOut: false,
      aborted: false,
    };
  }
  return {
    code: exit.code,
    stdout: Buffer.concat(stdout),
    stderr: Buffer.concat(stderr).toString('utf8'),
    timedOut: guard.timedOut,
    aborted: guard.aborted,
  };
}

function streamEnded(stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve) => {
    stream.once('close', resolve);
    stream.once('end', resolve);
    stream.once('error', () => resolve());
  });
}
