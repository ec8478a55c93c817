import { PassThrough } from 'node:stream';
import { decode, encode, frameReader } from '../../native-spawner';
import { SpawnerChannel } from '../../off-loop-spawn';
import type { SandboxProcess, SandboxSpawnOptions } from '../../sandbox.types';
import { SANDBOX_WORKDIR } from '../../sandbox.types';
import type { ToSpawner } from '../../spawner-messages';

/** Where the compiled helper is bound inside an execution's sandbox. */
export const SPAWNER_INSIDE = '/run/ambient-spawner';

/** The helper's largest event is an output chunk of 64 KiB: anything far larger is not its. */
const MAX_EVENT_BYTES = 1 << 20;

/** Why a sandbox's helper did not start: what it said on its standard error. */
export interface SpawnerNotStarted {
  said: string;
}

/**
 * The compiled spawn helper inside one bubblewrap execution (`ambient-spawner --sandbox`, pid 1 of
 * a bwrap made as each command's was before): it forks the execution's commands there, each under
 * a supervisor that ends whatever the command leaves running once it has ended, instead of an
 * exec of bwrap, its namespaces and its mounts per command (see native/spawner.c supervise). Its
 * requests and events are the host helper's protocol, through the stdin and stdout of the bwrap
 * it runs in; pids are the sandbox's, so a kill goes to the helper (`kill`), which ends the
 * command and what it left. What it sends is read as untrusted: a frame too large or malformed
 * ends it.
 */
export class SandboxSpawner {
  private readonly channel: SpawnerChannel;
  /** The file each started process runs, for error messages as Node words them. */
  private readonly files = new Map<number, string>();
  private ended = false;

  private constructor(private readonly helper: SandboxProcess) {
    const post = (message: ToSpawner): void => {
      if (this.ended) return;
      if (message.op === 'spawn') this.files.set(message.id, message.file);
      const stdin = helper.stdin;
      if (stdin && !stdin.destroyed && !stdin.writableEnded) stdin.write(encode(message));
    };
    this.channel = new SpawnerChannel({
      postMessage: post,
      ref: () => undefined,
      unref: () => undefined,
      killGroup: (id) => post({ op: 'kill', id }),
    });
    void helper.exited.then(() => {
      this.ended = true;
      this.channel.fail(new Error("the sandbox's process spawner stopped"));
    });
  }

  /**
   * Starts reading `helper` (the bwrap running the helper) and waits until it says it is ready;
   * `timeoutMs` bounds the wait. A helper that did not start is killed.
   */
  static async start(
    helper: SandboxProcess,
    timeoutMs: number,
  ): Promise<SandboxSpawner | SpawnerNotStarted> {
    const spawner = new SandboxSpawner(helper);
    let said = '';
    helper.stderr.on('data', (chunk: Buffer) => (said = (said + String(chunk)).slice(-500)));
    let timer: NodeJS.Timeout | undefined;
    const ready = await new Promise<boolean>((resolve) => {
      const violation = (): void => {
        helper.kill();
        resolve(false);
      };
      helper.stdout.on(
        'data',
        frameReader(
          (body) => {
            let message;
            try {
              message = decode(body, spawner.files.get(body.readUInt32LE(1)) ?? '');
            } catch {
              // Shorter than its kind's fields.
              return violation();
            }
            if (message?.op === 'exit') spawner.files.delete(message.id);
            if (message?.op === 'ready') resolve(true);
            else if (message) spawner.channel.handle(message);
          },
          MAX_EVENT_BYTES,
          violation,
        ),
      );
      void helper.exited.then(() => resolve(false));
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    clearTimeout(timer);
    if (ready && !spawner.ended) return spawner;
    helper.kill();
    await helper.exited;
    return { said: said.trim() };
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
