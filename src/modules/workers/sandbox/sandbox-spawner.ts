import { PassThrough, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { SpawnerFrames } from './native-spawner';
import { SpawnerChannel } from './off-loop-spawn';
import type { SandboxProcess, SandboxSpawnOptions } from './sandbox.types';
import { SANDBOX_WORKDIR } from './sandbox.types';
import type { ToSpawner } from './spawner-messages';

/** Where the compiled helper is bound inside an execution's sandbox (bubblewrap's and docker's). */
export const SPAWNER_INSIDE = '/run/ambient-spawner';

/** How long a helper that did not start may take to close its standard error after its exit. */
const STDERR_AFTER_EXIT_MS = 1_000;

/** The helper's largest event is an output chunk of 64 KiB: anything far larger is not its. */
const MAX_EVENT_BYTES = 1 << 20;

/** Why a sandbox's helper did not start: what it said on its standard error, and its exit code. */
export interface SpawnerNotStarted {
  said: string;
  /** Null when it was killed (it did not say it was ready in time). */
  code: number | null;
}

/**
 * The compiled spawn helper inside one bubblewrap execution (`ambient-spawner --sandbox`, pid 1 of
 * a bwrap made as each command's was before): it forks the execution's commands there, each under
 * a supervisor that ends whatever the command leaves running once it has ended, instead of an
 * exec of bwrap, its namespaces and its mounts per command (see native/spawner.c supervise). Its
 * requests and events are the host helper's protocol, through the stdin and stdout of the bwrap
 * it runs in; pids are the sandbox's, so a kill goes to the helper (`kill`), which ends the
 * command and what it left. What it sends is read as untrusted: a frame too large or malformed
 * ends it. A docker container's launcher becomes the same helper, as root, its requests and events
 * on FIFOs instead (see backends/docker/container-spawner.ts).
 */
export class SandboxSpawner {
  private readonly channel: SpawnerChannel;
  private ended = false;
  /** Settles true when the helper says it is ready, false once it ended or was given up on. */
  private readonly ready: Promise<boolean>;
  private settleReady!: (ready: boolean) => void;

  private constructor(
    private readonly helper: SandboxProcess,
    stdin: Writable,
  ) {
    this.ready = new Promise((resolve) => (this.settleReady = resolve));
    const frames = new SpawnerFrames(
      stdin,
      helper.stdout,
      (message) => (message.op === 'ready' ? this.settleReady(true) : this.channel.handle(message)),
      { maxFrame: MAX_EVENT_BYTES, violation: () => helper.kill() },
    );
    const post = (message: ToSpawner): void => {
      if (!this.ended) frames.post(message);
    };
    this.channel = new SpawnerChannel({
      postMessage: post,
      ref: () => undefined,
      unref: () => undefined,
      killGroup: (id) => post({ op: 'kill', id }),
    });
    void helper.exited.then(() => {
      this.ended = true;
      this.settleReady(false);
      this.channel.fail(new Error("the sandbox's process spawner stopped"));
    });
  }

  /**
   * Starts reading `helper` (the bwrap running the helper, its stdin piped) and waits until it
   * says it is ready; `timeoutMs` bounds the wait. A helper that did not start is killed.
   */
  static async start(
    helper: SandboxProcess,
    timeoutMs: number,
  ): Promise<SandboxSpawner | SpawnerNotStarted> {
    let said = '';
    helper.stderr.on('data', (chunk: Buffer) => (said = (said + String(chunk)).slice(-500)));
    const spawner = helper.stdin ? new SandboxSpawner(helper, helper.stdin) : null;
    const timer = setTimeout(() => spawner?.settleReady(false), timeoutMs);
    const ready = spawner ? await spawner.ready : false;
    clearTimeout(timer);
    if (ready && spawner && !spawner.ended) return spawner;
    helper.kill();
    const { code } = await helper.exited;
    // Its last words may come after its exit is seen (a bounded wait: a child may hold stderr).
    await Promise.race([
      finished(helper.stderr).catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, STDERR_AFTER_EXIT_MS).unref()),
    ]);
    return { said: said.trim(), code };
  }

  /** Starts `file` in the sandbox under a supervisor of its own (see native/spawner.c supervise). */
  spawn(file: string, args: string[], options: SandboxSpawnOptions): SandboxProcess {
    if (this.ended) return notStarted(file, "the sandbox's process spawner is gone");
    return this.channel.spawn(file, args, {
      cwd: options.cwd ?? SANDBOX_WORKDIR,
      env: options.env,
      stdin: options.stdin ?? 'ignore',
    });
  }

  /** Ends the helper, and with its sandbox every command it started. */
  async close(): Promise<void> {
    this.helper.kill();
    await this.helper.exited;
  }
}

/** A process that never started: no such program in the sandbox (or no sandbox any more). */
export function notStarted(file: string, why?: string): SandboxProcess {
  const error: NodeJS.ErrnoException = new Error(
    why ? `spawn ${file}: ${why}` : `spawn ${file} ENOENT`,
  );
  error.code = why ? 'ESRCH' : 'ENOENT';
  const ended = (): PassThrough => new PassThrough().end();
  return {
    stdin: null,
    stdout: ended(),
    stderr: ended(),
    exited: Promise.resolve({ code: null, signal: null, startError: error }),
    kill: () => undefined,
  };
}
