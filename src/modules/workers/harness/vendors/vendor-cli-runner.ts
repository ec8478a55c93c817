import { createInterface } from 'node:readline';
import type { Sandbox } from '../../sandbox/sandbox.types';
import { guardProcess } from '../process-group';

export interface VendorCliInvocation {
  /** The execution's sandbox: the CLI and everything it starts run inside. */
  sandbox: Sandbox;
  file: string;
  args: string[];
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

/** Runs a vendor CLI in the execution's sandbox, feeding its stdout lines to `onLine`. */
export async function runVendorCli(inv: VendorCliInvocation): Promise<VendorCliExit> {
  const proc = inv.sandbox.spawn(inv.file, inv.args, { env: inv.env });
  const guard = guardProcess(proc, Math.max(1, inv.timeoutMs), inv.signal);
  const stdout: string[] = [];
  let stdoutBytes = 0;
  let stderr = '';
  let lines = Promise.resolve();

  proc.stdout.setEncoding('utf8');
  const reader = createInterface({ input: proc.stdout, crlfDelay: Infinity });
  reader.on('line', (line) => {
    stdoutBytes += Buffer.byteLength(line) + 1;
    if (stdoutBytes > MAX_STDOUT_BYTES) {
      proc.kill();
      return;
    }
    stdout.push(line + '\n');
    lines = lines.then(() => inv.onLine(line)).catch(() => undefined);
  });
  const stdoutRead = new Promise<void>((resolve) => reader.on('close', resolve));
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL_BYTES);
  });
  const exit = await proc.exited;
  // Whatever the CLI started in the background must not outlive it.
  proc.kill();
  if (!exit.startError) await stdoutRead;
  guard.dispose();
  await lines;
  return {
    exitCode: exit.code,
    startError: exit.startError,
    timedOut: guard.timedOut,
    aborted: guard.aborted,
    stdout: stdout.join(''),
    stderrTail: lastLines(stderr),
  };
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
