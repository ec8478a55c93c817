import type Dockerode from 'dockerode';
import { constants as osConstants } from 'node:os';
import { PassThrough, Writable } from 'node:stream';
import type { Duplex, Readable } from 'node:stream';
import type { SandboxExit, SandboxProcess } from '../../sandbox.types';
import type { SandboxSpawner } from '../../sandbox-spawner';
import { launch, type LaunchedCommand } from './container-launcher';

/**
 * What every docker exec runs: a POSIX shell that reports its pid (which is its process group:
 * `runc exec` makes each exec a session leader) on the first stderr line, checks that the
 * working directory and the program exist (second line: `exec`, or `enoent <what>` and exit 127),
 * then replaces itself with `env -i` + the program, so the program keeps that pid and sees only
 * the environment it was given. Both control lines are written before the program runs, so
 * nothing the program prints can imitate them; they are taken off stderr.
 *
 * Arguments: $1 cwd, $2 PATH to look the program up in, $3 number of NAME=value pairs, then
 * those pairs, the program and its arguments.
 */
const WRAPPER = [
  `printf '%s\\n' "$$" >&2`,
  `cd -- "$1" 2>/dev/null || { printf 'enoent cwd\\n' >&2; exit 127; }`,
  'lookup=$2; n=$3; shift 3',
  'eval "file=\\${$((n + 1))}"',
  'found=',
  'case $file in',
  '  */*) if [ -f "$file" ] && [ -x "$file" ]; then found=1; fi ;;',
  '  *) set -f; IFS=:',
  '     for dir in $lookup; do',
  '       if [ -n "$dir" ] && [ -f "$dir/$file" ] && [ -x "$dir/$file" ]; then found=1; break; fi',
  '     done',
  '     unset IFS; set +f ;;',
  'esac',
  `if [ -z "$found" ]; then printf 'enoent program\\n' >&2; exit 127; fi`,
  `printf 'exec\\n' >&2`,
  'exec env -i "$@"',
].join('\n');

/**
 * How long an exec the runtime refused to start is tried again (see refusedByRuntime): a killed
 * fork bomb's processes hold the pids limit until they are reaped, which took over 2 s on two
 * loaded cores (the next command failed with `read init-p: connection reset by peer`).
 */
const RUNTIME_RETRY_WINDOW_MS = 15_000;

/**
 * A spawner's start errors after which nothing ran: its fork (or a pipe) failed, or it was gone
 * before the request (ESRCH: its container's processes were killed, or the container replaced).
 */
const NOT_FORKED = new Set(['EAGAIN', 'EWOULDBLOCK', 'ENOMEM', 'EMFILE', 'ENFILE', 'ESRCH']);

/** Where the `env -i`'d program is looked up when its environment has no PATH (glibc's default). */
const DEFAULT_LOOKUP_PATH = '/bin:/usr/bin';

export interface DockerExecOptions {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stdin: boolean;
  /** `user[:group]` the process runs as. */
  user: string;
  /** Kills the process group `pgid` (a pid inside the container). */
  killGroup: (pgid: number) => Promise<void>;
  /**
   * The container's launcher (see container-launcher.ts), used instead of a `docker exec` for
   * processes without stdin; `docker exec` still runs them when it does not answer.
   */
  launcher?: DockerLauncherTarget | null;
  /**
   * The container's compiled spawner (see container-spawner.ts), its launcher then: null when it
   * has none (the shell launcher, then `docker exec`, run the process); resolving null when it
   * did not start (`docker exec` runs it).
   */
  spawner?: Promise<SandboxSpawner | null> | null;
}

export interface DockerLauncherTarget {
  /** The killer's directory on this host and in the container. */
  hostDir: string;
  insideDir: string;
  /** The launcher's FIFO there. */
  fifo: string;
  /** The sandbox user, numeric. */
  uid: number;
  gid: number;
  /** Registers a launched command until it is disposed (the sandbox's close ends it). */
  track: (command: LaunchedCommand) => () => void;
  /**
   * Until when (performance.now()) commands go straight to `docker exec`: set when the launcher
   * did not acknowledge a command in time, so that the next ones do not each wait as long.
   */
  pausedUntil: number;
  /** How long a command waits for the launcher's acknowledgement (LAUNCHER_ACK_TIMEOUT_MS). */
  ackTimeoutMs?: number;
}

/**
 * How long a command waits for the launcher to acknowledge it before it goes to `docker exec`
 * (see LaunchedCommand.acknowledged); nothing of it has run then, and nothing will. Well above the
 * slowest whole launcher command seen on a loaded host (≈ 1 s at a load average of 100): only a
 * wedged launcher waits that long, one that cannot fork says so at once.
 */
export const LAUNCHER_ACK_TIMEOUT_MS = 5000;
/** How long a launcher that did not acknowledge in time is left aside. */
const LAUNCHER_PAUSE_MS = 10_000;

/** Docker's exit code of a process killed by signal n is 128 + n. */
function signalOf(code: number): string | null {
  if (code <= 128 || code > 128 + 64) return null;
  const n = code - 128;
  const name = Object.entries(osConstants.signals).find(([, value]) => value === n)?.[0];
  return name ?? null;
}

function enoent(message: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(message);
  error.code = 'ENOENT';
  error.errno = -2;
  error.syscall = 'spawn';
  return error;
}

/**
 * A process started by `docker exec` in a sandbox container, with Node streams: the exec's
 * multiplexed stream is split into stdout and stderr (with backpressure: the socket is not read
 * while a consumer lags), and stdin, when piped, is written to the exec and half-closed at its end.
 * It exists at once; the exec is made once `container` (still being started, maybe) resolves.
 * When it rejects, the process ends with a startError carrying its message (code EIO).
 */
export class DockerExecProcess implements SandboxProcess {
  readonly stdin: Writable | null;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly exited: Promise<SandboxExit>;

  private pid: number | null = null;
  /** The wrapper said `exec` (the program runs) or `enoent …` (it never will). */
  private verdict: 'exec' | 'enoent' | null = null;
  private enoentWhat = '';
  private killRequested = false;
  /** stdout that arrived before the wrapper's verdict (see WRAPPER). */
  private heldStdout: Buffer[] = [];
  private controlBuffer: Buffer = Buffer.alloc(0);
  private onVerdict: () => void = () => undefined;
  private onKill: () => void = () => undefined;
  private readonly killed = new Promise<void>((resolve) => (this.onKill = resolve));
  /** How the process was started, once it was: for benchmarks and tests. */
  startedBy: 'spawner' | 'launcher' | 'exec' | null = null;

  constructor(
    private readonly container: Promise<Dockerode.Container>,
    private readonly options: DockerExecOptions,
  ) {
    this.stdin = options.stdin ? new PassThrough() : null;
    this.exited = this.run().then(
      (exit) => exit,
      async (error: unknown) => this.startFailed(await this.explained(error)),
    );
  }

  /**
   * Kills the process's group, also once the process itself has exited: what it left running
   * there (background jobs, a fork bomb holding the pids limit) ends with the command.
   */
  kill(): void {
    if (this.killRequested) return;
    this.killRequested = true;
    this.onKill();
    if (this.pid !== null) this.killPid();
  }

  /**
   * Kills the process group the wrapper reported. Only a real process's: never 0 or 1 (the
   * killer's own group, or every process), whatever came instead of the wrapper's first line.
   */
  private killPid(): void {
    if (this.pid === null || !Number.isInteger(this.pid) || this.pid <= 1) return;
    void this.options.killGroup(this.pid).catch(() => undefined);
  }

  private async run(): Promise<SandboxExit> {
    const { env, stdin, user } = this.options;
    const pairs = Object.entries(env).map(([name, value]) => `${name}=${value}`);
    let container: Dockerode.Container;
    try {
      container = await this.container;
    } catch (error) {
      return this.noContainer(error);
    }
    // Killed before it could start: it never will.
    if (this.killRequested) return this.ended({ code: null, signal: 'SIGKILL' });
    const spawner = await this.options.spawner;
    if (spawner && !this.killRequested) {
      const spawned = await this.runSpawned(spawner);
      if (spawned) return spawned;
    }
    if (this.killRequested) return this.ended({ code: null, signal: 'SIGKILL' });
    const { launcher } = this.options;
    // A container whose launcher is its spawner has no shell launcher to hand the command to.
    const shellLauncher = launcher && !this.options.spawner;
    if (shellLauncher && !stdin && performance.now() >= launcher.pausedUntil) {
      const launched = await this.runLaunched(launcher, pairs);
      if (launched) return launched;
      if (this.killRequested) return this.ended({ code: null, signal: 'SIGKILL' });
    }
    this.startedBy = 'exec';
    let exec: Dockerode.Exec;
    let exitCode: number | null;
    const retryUntil = Date.now() + RUNTIME_RETRY_WINDOW_MS;
    for (let attempt = 0; ; attempt++) {
      exec = await container.exec({
        Cmd: ['/bin/sh', '-c', WRAPPER, ...this.wrapperArgs(pairs)],
        AttachStdin: stdin,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        User: user,
        Env: [],
      });
      // Killed while the exec was being made (the sandbox closing): it must not start now.
      if (this.killRequested) return this.ended({ code: null, signal: 'SIGKILL' });
      const socket = (await exec.start({ hijack: true, stdin })) as Duplex;
      const input = this.stdin as PassThrough | null;
      if (input) {
        // Ending stdin half-closes the connection: the daemon closes the process's stdin (EOF).
        input.pipe(socket);
        socket.on('error', () => input.unpipe(socket));
      }
      await new Promise<void>((resolve) => {
        const demux = this.demultiplexer();
        socket.pipe(demux);
        demux.on('finish', resolve);
        socket.on('error', () => {
          socket.unpipe(demux);
          demux.end();
        });
        socket.on('close', () => {
          // A socket closed without an end (daemon gone): finish with what arrived.
          if (!demux.writableEnded) demux.end();
        });
      });
      exitCode = await this.exitCode(exec);
      if (this.refusedByRuntime(exitCode) && Date.now() < retryUntil && !this.killRequested) {
        // The runtime could not start the exec (e.g. the pids limit is still full while a killed
        // fork bomb is being reaped): nothing ran, so try again shortly.
        this.heldStdout = [];
        this.controlBuffer = Buffer.alloc(0);
        input?.unpipe();
        await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** attempt, 500)));
        continue;
      }
      if (this.refusedByRuntime(exitCode)) {
        const said = Buffer.concat([...this.heldStdout, this.controlBuffer]).toString('utf8');
        return this.ended({
          code: null,
          signal: null,
          startError: Object.assign(
            new Error(`cannot start a process in the sandbox: ${said.trim()}`),
            { code: 'EIO' },
          ),
        });
      }
      this.flushHeld();
      this.stdout.end();
      this.stderr.end();
      break;
    }
    if (this.verdict !== 'enoent' && this.pid === null && (exitCode === 126 || exitCode === 127)) {
      // The wrapper never ran: the image has no /bin/sh.
      return {
        code: null,
        signal: null,
        startError: enoent(`spawn /bin/sh ENOENT (the image has no /bin/sh)`),
      };
    }
    return this.exitOf(exitCode);
  }

  /** WRAPPER's arguments ($0 onwards): directory, lookup path, variables, then the command. */
  private wrapperArgs(pairs: string[]): string[] {
    const { file, args, cwd, env } = this.options;
    return [
      'ambient-exec',
      cwd,
      env.PATH ?? DEFAULT_LOOKUP_PATH,
      String(pairs.length),
      ...pairs,
      file,
      ...args,
    ];
  }

  /**
   * Runs the process through the container's launcher: stdout, stderr and the wait status come
   * through FIFOs. Null when the launcher did not start the program (it is not there, it ended,
   * or the wrapper did not get as far as `exec`): nothing of the program ran, `docker exec` may.
   * The process's streams end when every writer of their FIFO is gone, which may be after the
   * process (a background child that keeps them open).
   */
  private async runLaunched(
    target: DockerLauncherTarget,
    pairs: string[],
  ): Promise<SandboxExit | null> {
    const wrapperArgs = this.wrapperArgs(pairs);
    const launched = await launch(target.hostDir, target.insideDir, target.fifo, {
      wrapper: WRAPPER,
      args: wrapperArgs,
      // The same arguments but $0: the helper speaks as the wrapper does.
      helperArgs: ['--wrapper', ...wrapperArgs.slice(1)],
      uid: target.uid,
      gid: target.gid,
    });
    if (!launched) return null;
    const untrack = target.track(launched);
    // Bounded: a launcher alive but unable to fork (a full pids limit) never acknowledges.
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const acknowledged = await Promise.race([
      launched.acknowledged,
      this.killed.then(() => false),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => {
          timedOut = true;
          resolve(false);
        }, target.ackTimeoutMs ?? LAUNCHER_ACK_TIMEOUT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    if (!acknowledged || this.killRequested) {
      // Nothing ran, and the supervisor (should it come after all) runs nothing.
      await launched.cancel();
      untrack();
      await launched.dispose();
      if (this.killRequested) return this.ended({ code: null, signal: 'SIGKILL' });
      if (timedOut) target.pausedUntil = performance.now() + LAUNCHER_PAUSE_MS;
      return null;
    }
    this.startedBy = 'launcher';
    // Read before the word: a short command can start and end (its FIFOs too) while it is said.
    const verdict = new Promise<void>((resolve) => (this.onVerdict = resolve));
    const stderrEnded = pump(launched.stderr, (chunk) => this.onStderr(chunk));
    const stdoutEnded = pump(launched.stdout, (chunk) => this.onStdout(chunk));
    await launched.proceed();
    const status = await launched.status;
    // The wrapper's control lines were written before the program ran, or it never ran.
    await Promise.race([verdict, stderrEnded]);
    if (this.verdict === null) {
      untrack();
      await launched.dispose();
      if (this.killRequested) return this.ended({ code: null, signal: 'SIGKILL' });
      this.pid = null;
      this.heldStdout = [];
      this.controlBuffer = Buffer.alloc(0);
      this.startedBy = null;
      return null;
    }
    void stderrEnded.then(() => this.stderr.end());
    void stdoutEnded.then(() => {
      this.flushHeld();
      this.stdout.end();
    });
    void Promise.all([stdoutEnded, stderrEnded]).then(async () => {
      untrack();
      await launched.dispose();
    });
    return this.exitOf(status);
  }

  /**
   * Runs the process through the container's spawner: its streams and exit come as its events.
   * Null when the spawner could not fork for it (the pids limit is full) or is gone: nothing of it
   * ran, and `docker exec` tries (and retries while the runtime cannot start it either).
   */
  private async runSpawned(spawner: SandboxSpawner): Promise<SandboxExit | null> {
    const { file, args, cwd, env, stdin } = this.options;
    const child = spawner.spawn(file, args, { cwd, env, stdin: stdin ? 'pipe' : 'ignore' });
    this.startedBy = 'spawner';
    void this.killed.then(() => child.kill());
    // Its stdin is given to the spawner at once: such a process is never tried again elsewhere.
    if (this.stdin && child.stdin) this.stdin.pipe(child.stdin);
    // Not ended with the child's: should nothing have run, `docker exec` writes them.
    child.stdout.pipe(this.stdout, { end: false });
    child.stderr.pipe(this.stderr, { end: false });
    const exit = await child.exited;
    const error = exit.startError;
    // A process with stdin is tried elsewhere only when the spawner was gone (none of its stdin
    // was taken then); after a failed fork, some may have been.
    const retried = !stdin || error?.code === 'ESRCH';
    if (error && retried && !this.killRequested && NOT_FORKED.has(String(error.code))) {
      child.stdout.unpipe(this.stdout);
      child.stderr.unpipe(this.stderr);
      this.startedBy = null;
      return null;
    }
    endWith(child.stdout, this.stdout);
    endWith(child.stderr, this.stderr);
    if (this.killRequested) return { code: null, signal: 'SIGKILL' };
    if (error?.code === 'ENOENT') {
      const what = error.message.endsWith(`: chdir failed in the new process (ENOENT)`)
        ? `working directory ${cwd}`
        : file;
      const message = `spawn ${file} ENOENT (${what} not found in the sandbox)`;
      return { ...exit, startError: enoent(message) };
    }
    if (error || exit.signal) return exit;
    return this.exitOf(exit.code);
  }

  /**
   * How the command ended, from the wrapper's verdict and its exit status (null: killed, or the
   * container went away).
   */
  private exitOf(status: number | null): SandboxExit {
    if (this.verdict === 'enoent') {
      const { file, cwd } = this.options;
      const what = this.enoentWhat === 'cwd' ? `working directory ${cwd}` : file;
      return {
        code: null,
        signal: null,
        startError: enoent(`spawn ${file} ENOENT (${what} not found in the sandbox)`),
      };
    }
    if (status === null) return { code: null, signal: 'SIGKILL' };
    const signal = signalOf(status);
    return signal ? { code: null, signal } : { code: status, signal: null };
  }

  /** The exec's exit code once it has ended; null when the container is gone. */
  private async exitCode(exec: Dockerode.Exec): Promise<number | null> {
    // The stream can end before the process (it closed its stdout and stderr): wait for it.
    for (let delay = 20; ; delay = Math.min(delay * 2, 500)) {
      let info: Dockerode.ExecInspectInfo;
      try {
        info = await exec.inspect();
      } catch (_error) {
        return null;
      }
      if (!info.Running) return info.ExitCode ?? null;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /** The exec ended before the wrapper said a word, with the runtime's own complaint. */
  private refusedByRuntime(exitCode: number | null): boolean {
    if (this.pid !== null || this.verdict !== null) return false;
    if (exitCode !== 126 && exitCode !== 127 && exitCode !== null) return false;
    const said = Buffer.concat([...this.heldStdout, this.controlBuffer]).toString('utf8');
    return /OCI runtime exec failed|read init-p/.test(said);
  }

  /** The sandbox's container could not be started (or the sandbox is closed). */
  private noContainer(error: unknown): SandboxExit {
    const message = error instanceof Error ? error.message : String(error);
    const startError: NodeJS.ErrnoException = Object.assign(new Error(message), { code: 'EIO' });
    return this.ended({ code: null, signal: null, startError });
  }

  private ended(exit: SandboxExit): SandboxExit {
    this.stdout.end();
    this.stderr.end();
    return exit;
  }

  /**
   * An exec refused because the container is no longer running (its main process exited, e.g. an
   * image without /bin/sh) says how the container ended instead of Docker's bare 409.
   */
  private async explained(error: unknown): Promise<unknown> {
    const message = error instanceof Error ? error.message : String(error);
    if (!/is not running/i.test(message)) return error;
    try {
      const { State } = await (await this.container).inspect();
      if (State.Running) return error;
      const hint = State.ExitCode === 127 ? ' (does the image have /bin/sh?)' : '';
      return new Error(`the sandbox's container exited with code ${State.ExitCode}${hint}`);
    } catch (_inspectError) {
      return error;
    }
  }

  private startFailed(error: unknown): SandboxExit {
    this.flushHeld();
    this.stdout.end();
    this.stderr.end();
    const message = error instanceof Error ? error.message : String(error);
    const startError: NodeJS.ErrnoException =
      /executable file not found|no such file or directory/i.test(message)
        ? enoent(`spawn ${this.options.file} ENOENT (${message.trim()})`)
        : Object.assign(new Error(`cannot start a process in the sandbox: ${message.trim()}`), {
            code: 'EIO',
          });
    return { code: null, signal: null, startError };
  }

  private flushHeld(): void {
    for (const chunk of this.heldStdout) this.stdout.write(chunk);
    this.heldStdout = [];
  }

  /** Splits Docker's multiplexed frames (8-byte header: stream, 0, 0, 0, size BE32). */
  private demultiplexer(): Writable {
    let pending: Buffer = Buffer.alloc(0);
    return new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
        const writes: Array<Promise<void>> = [];
        while (pending.length >= 8) {
          const size = pending.readUInt32BE(4);
          if (pending.length < 8 + size) break;
          const stream = pending[0];
          const payload = pending.subarray(8, 8 + size);
          pending = pending.subarray(8 + size);
          if (stream === 2) writes.push(this.onStderr(payload));
          else if (stream === 1) writes.push(this.onStdout(payload));
        }
        Promise.all(writes).then(() => callback(), callback);
      },
    });
  }

  private onStdout(payload: Buffer): Promise<void> {
    if (this.verdict === null) {
      this.heldStdout.push(Buffer.from(payload));
      return Promise.resolve();
    }
    return write(this.stdout, payload);
  }

  private onStderr(payload: Buffer): Promise<void> {
    if (this.verdict !== null) return write(this.stderr, payload);
    this.controlBuffer = Buffer.concat([this.controlBuffer, payload]);
    for (;;) {
      const newline = this.controlBuffer.indexOf(10);
      if (newline < 0) return Promise.resolve();
      const line = this.controlBuffer.subarray(0, newline).toString('utf8');
      this.controlBuffer = this.controlBuffer.subarray(newline + 1);
      if (this.pid === null) {
        this.pid = Number(line);
        if (this.killRequested) this.killPid();
        continue;
      }
      if (line.startsWith('enoent')) {
        this.verdict = 'enoent';
        this.enoentWhat = line.slice('enoent '.length);
      } else {
        this.verdict = 'exec';
      }
      this.onVerdict();
      const rest = this.controlBuffer;
      this.controlBuffer = Buffer.alloc(0);
      this.flushHeld();
      return rest.length ? write(this.stderr, rest) : Promise.resolve();
    }
  }
}

/** Feeds a socket's data to `sink`, one chunk at a time; resolves at its end. */
function pump(source: Readable, sink: (chunk: Buffer) => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    if (source.readableEnded || source.destroyed) return resolve();
    source.on('data', (chunk: Buffer) => {
      source.pause();
      void sink(chunk).then(() => source.resume());
    });
    source.once('end', resolve);
    source.once('close', resolve);
    source.on('error', () => resolve());
  });
}

/** Ends `sink` once `source` has ended (at once when it has). */
function endWith(source: Readable, sink: PassThrough): void {
  const end = (): void => {
    if (!sink.writableEnded) sink.end();
  };
  if (source.readableEnded || source.destroyed) end();
  else source.once('end', end).once('close', end);
}

/** Writes, resolving once the reader wants more (backpressure). */
function write(stream: PassThrough, payload: Buffer): Promise<void> {
  if (stream.destroyed) return Promise.resolve();
  if (stream.write(Buffer.from(payload))) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
