import { SandboxLostError, type Sandbox } from '../sandbox/sandbox.types';
import { guardProcess } from './process-group';
import { outputEnded } from './output-grace';

export interface RunCommandOptions {
  /** Where the command runs: everything agent-controlled runs in the execution's sandbox. */
  sandbox: Sandbox;
  command: string;
  /** Working directory inside the sandbox; its workspace when unset. */
  cwd?: string;
  /** The complete environment of the command; nothing is inherited from this process. */
  env: Record<string, string>;
  timeoutMs: number;
  /** Aborting kills the command and everything it started. */
  signal?: AbortSignal;
  /** Output beyond this many bytes keeps its head and tail and drops the middle. */
  maxOutputBytes?: number;
  /** Called with every piece of output as it arrives (stdout and stderr, in order). */
  onOutput?: (chunk: Buffer) => void;
}

export interface CommandResult {
  /** Null when the command was killed by a signal or could not be started. */
  exitCode: number | null;
  /** Combined stdout and stderr. */
  output: string;
  timedOut: boolean;
  aborted: boolean;
  /** The sandbox limit that killed the command ("out of memory: …"), when one did. */
  limitHit: string | null;
}

export const DEFAULT_MAX_OUTPUT_BYTES = 16 * 1024;

/**
 * How long to keep reading after the shell exited: a background process it started may still
 * hold the output pipes open, and the command must not wait for it (it is killed then).
 */
const OUTPUT_GRACE_MS = 200;

/**
 * Runs `bash -c command` in the sandbox and collects its output. Throws SandboxLostError when the
 * command ended without an exit code because the sandbox itself is gone: that is no command's
 * failure, and no later command would fare better.
 */
export async function runCommand(opts: RunCommandOptions): Promise<CommandResult> {
  const output = new OutputCollector(opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES);
  if (opts.signal?.aborted) {
    return { exitCode: null, output: '', timedOut: false, aborted: true, limitHit: null };
  }
  // One pipe for both streams keeps stdout and stderr lines in the order they were written.
  const proc = opts.sandbox.spawn('/bin/bash', ['-c', `exec 2>&1\n${opts.command}`], {
    cwd: opts.cwd,
    env: opts.env,
  });
  const guard = guardProcess(proc, opts.timeoutMs, opts.signal);
  const received = (chunk: Buffer): void => {
    output.add(chunk);
    opts.onOutput?.(chunk);
  };
  proc.stdout.on('data', received);
  proc.stderr.on('data', received);
  const streamsClosed = Promise.all([proc.stdout, proc.stderr].map(closed));
  const exit = await proc.exited;
  if (exit.startError)
    received(Buffer.from(`failed to start command: ${exit.startError.message}\n`));
  await outputEnded(streamsClosed, OUTPUT_GRACE_MS);
  // What the command left running in the background ends with it (a fork bomb too), on every
  // backend alike (a bubblewrap command's pid namespace ends with it anyway).
  proc.kill();
  guard.dispose();
  proc.stdout.destroy();
  proc.stderr.destroy();
  const unasked = !guard.timedOut && !guard.aborted;
  const killedUnasked = unasked && (exit.signal === 'SIGKILL' || exit.code === 137);
  // A limit's kill is the command's own failure, said as such; asked first, as a lost sandbox
  // is looked at again for a moment (see Sandbox.lost).
  const limitHit = killedUnasked ? await opts.sandbox.limitHit() : null;
  // A removed container's command may end without a code or as SIGKILL (137), by who reported it.
  if (unasked && !limitHit && (exit.code === null || killedUnasked)) {
    const lost = await opts.sandbox.lost?.();
    if (lost) throw new SandboxLostError(lost);
  }
  return {
    exitCode: exit.code,
    output: output.text(),
    timedOut: guard.timedOut,
    aborted: guard.aborted,
    limitHit,
  };
}

function closed(stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve) => {
    stream.once('close', resolve);
    stream.once('end', resolve);
    stream.once('error', () => resolve());
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
