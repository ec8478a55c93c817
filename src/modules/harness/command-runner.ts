import { existsSync } from 'node:fs';
import { guardProcessGroup, spawnProcessGroup } from './process-group';

export interface RunCommandOptions {
  command: string;
  cwd: string;
  /** The complete environment of the command; nothing is inherited from this process. */
  env: Record<string, string>;
  timeoutMs: number;
  /** Aborting kills the command's whole process group. */
  signal?: AbortSignal;
  /** Output beyond this many bytes keeps its head and tail and drops the middle. */
  maxOutputBytes?: number;
}

export interface CommandResult {
  /** Null when the command was killed by a signal or could not be started. */
  exitCode: number | null;
  /** Combined stdout and stderr. */
  output: string;
  timedOut: boolean;
  aborted: boolean;
}

export const DEFAULT_MAX_OUTPUT_BYTES = 16 * 1024;

/**
 * How long to keep reading after the shell exited: a background process it started may still
 * hold the output pipes open, and the command must not wait for it.
 */
const OUTPUT_GRACE_MS = 200;

/** Without PATH in the command's environment, `bash` could not be looked up by name. */
const BASH = existsSync('/bin/bash') ? '/bin/bash' : 'bash';

/** Runs `bash -c command` in its own process group and collects its output. */
export function runCommand(opts: RunCommandOptions): Promise<CommandResult> {
  const output = new OutputCollector(opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES);
  if (opts.signal?.aborted) {
    return Promise.resolve({ exitCode: null, output: '', timedOut: false, aborted: true });
  }

  return new Promise((resolve) => {
    let exitCode: number | null = null;
    let settled = false;
    let graceTimer: NodeJS.Timeout | undefined;

    // One pipe for both streams keeps stdout and stderr lines in the order they were written.
    const child = spawnProcessGroup(BASH, ['-c', `exec 2>&1\n${opts.command}`], {
      cwd: opts.cwd,
      env: opts.env,
    });
    const guard = guardProcessGroup(child, opts.timeoutMs, opts.signal);

    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(graceTimer);
      guard.dispose();
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({
        exitCode,
        output: output.text(),
        timedOut: guard.timedOut,
        aborted: guard.aborted,
      });
    };

    child.stdout?.on('data', (chunk: Buffer) => output.add(chunk));
    child.stderr?.on('data', (chunk: Buffer) => output.add(chunk));
    child.on('error', (err) => {
      output.add(Buffer.from(`failed to start command: ${err.message}\n`));
      finish();
    });
    child.on('exit', (code) => {
      exitCode = code;
      graceTimer = setTimeout(finish, OUTPUT_GRACE_MS);
    });
    child.on('close', finish);
  });
}

/** Keeps the first and the last half of the byte budget. */
class OutputCollector {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private totalBytes = 0;
  private readonly halfBudget: number;

  constructor(maxBytes: number) {
    this.halfBudget = Math.floor(maxBytes / 2);
  }

  add(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    if (this.headBytes < this.halfBudget) {
      const taken = chunk.subarray(0, this.halfBudget - this.headBytes);
      this.head.push(taken);
      this.headBytes += taken.length;
      chunk = chunk.subarray(taken.length);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    while (this.tail.length > 1 && this.tailBytes - this.tail[0].length >= this.halfBudget) {
      this.tailBytes -= this.tail.shift()!.length;
    }
  }

  text(): string {
    let tail = Buffer.concat(this.tail);
    if (tail.length > this.halfBudget) tail = tail.subarray(tail.length - this.halfBudget);
    const dropped = this.totalBytes - this.headBytes - tail.length;
    const head = Buffer.concat(this.head);
    if (dropped === 0) return Buffer.concat([head, tail]).toString('utf8');
    const omitted = `\n[... ${dropped} bytes of output omitted ...]\n`;
    return head.toString('utf8') + omitted + tail.toString('utf8');
  }
}
