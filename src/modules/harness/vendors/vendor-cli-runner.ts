import { createInterface } from 'node:readline';
import { guardProcessGroup, killProcessGroup, spawnProcessGroup } from '../process-group';

export interface VendorCliInvocation {
  file: string;
  args: string[];
  cwd: string;
  /** The complete environment of the CLI; nothing is inherited from this process. */
  env: Record<string, string>;
  timeoutMs: number;
  /** Aborting kills the CLI's whole process group. */
  signal: AbortSignal;
  /** Called for every stdout line, one at a time, in order. */
  onLine(line: string): Promise<void>;
}

export interface VendorCliExit {
  /** Null when killed by a signal or never started. */
  exitCode: number | null;
  /** Set when the CLI could not be started (ENOENT: not installed). */
  startError?: NodeJS.ErrnoException;
  timedOut: boolean;
  aborted: boolean;
  /** Everything the CLI printed on stdout, byte for byte: its raw event stream. */
  stdout: string;
  /** The last lines of its stderr, for error messages. */
  stderrTail: string;
}

const STDERR_TAIL_BYTES = 4096;
/** A runaway stream is cut here: the CLI is killed rather than filling memory. */
const MAX_STDOUT_BYTES = 64 * 1024 * 1024;

/** Runs a vendor CLI in its own process group, feeding its stdout lines to `onLine`. */
export function runVendorCli(inv: VendorCliInvocation): Promise<VendorCliExit> {
  return new Promise((resolve) => {
    const child = spawnProcessGroup(inv.file, inv.args, { cwd: inv.cwd, env: inv.env });
    const guard = guardProcessGroup(child, Math.max(1, inv.timeoutMs), inv.signal);
    const stdout: string[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let startError: NodeJS.ErrnoException | undefined;
    let exitCode: number | null = null;
    let lines = Promise.resolve();
    let pending = 2; // stdout fully read + process closed

    const done = (): void => {
      if (--pending > 0) return;
      guard.dispose();
      void lines.then(() =>
        resolve({
          exitCode,
          startError,
          timedOut: guard.timedOut,
          aborted: guard.aborted,
          stdout: stdout.join(''),
          stderrTail: lastLines(stderr),
        }),
      );
    };

    child.stdout!.setEncoding('utf8');
    const reader = createInterface({ input: child.stdout!, crlfDelay: Infinity });
    reader.on('line', (line) => {
      stdoutBytes += Buffer.byteLength(line) + 1;
      if (stdoutBytes > MAX_STDOUT_BYTES) {
        killProcessGroup(child);
        return;
      }
      stdout.push(line + '\n');
      lines = lines.then(() => inv.onLine(line)).catch(() => undefined);
    });
    reader.on('close', done);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL_BYTES);
    });
    let closed = false;
    const processEnded = (code: number | null): void => {
      if (closed) return;
      closed = true;
      exitCode = code;
      // Whatever the CLI started in the background must not outlive it.
      killProcessGroup(child);
      done();
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      startError = err;
      // Never started: no 'close' is guaranteed to follow.
      if (child.pid === undefined) processEnded(null);
    });
    child.on('close', processEnded);
  });
}

/** The last `count` non-empty lines of `text`. */
export function lastLines(text: string, count = 10): string {
  return text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l !== '')
    .slice(-count)
    .join('\n');
}
