import { ChildProcess, spawn } from 'node:child_process';
import { PassThrough, Writable } from 'node:stream';
import { NativeSpawnerProcess, nativeSpawnerPath } from './native-spawner';
import type { SandboxExit, SandboxProcess } from './sandbox.types';
import type { EnterNamespaces, FromSpawner, ToSpawner } from './spawner-messages';

/**
 * Starting a child process blocks the calling thread until the child has exec'd (libuv forks,
 * then waits on a pipe for exec): 10–40 ms each on a loaded 2-core host, so 100 runs starting
 * their commands at once held the event loop for seconds (the API, the leases and every other
 * run waited). Sandboxes therefore start their processes from small helper processes (a fork of
 * a few MB, and nothing of Ambient's memory to copy or lock): the event loop only relays stdio. The child leads its own process group (`detached`), and `kill` SIGKILLs
 * that group from here. The helper is the compiled one (native-spawner) where it was built, else
 * a small Node process.
 */
export interface OffLoopSpawnOptions {
  cwd: string;
  /** The complete environment of the process. */
  env: Record<string, string>;
  stdin: 'ignore' | 'pipe';
  /** cgroup.procs files to join before exec; only where `preparesInChild()`. */
  joinCgroups?: string[];
  /** Namespaces of another process to enter before exec; only where `preparesInChild()`. */
  enterNamespacesOf?: EnterNamespaces;
  /**
   * The command is `<the compiled spawner> --confine …`: the helper makes that sandbox in the child
   * it forks instead of an exec of it (a process fewer per sandbox); the Node helper runs it as
   * given. Not with `enterNamespacesOf`.
   */
  confine?: boolean;
}

/**
 * The helper (`node -e`), plain JavaScript so that it runs the same from sources (swc, jest) and
 * from the build. It starts processes and relays their stdio and exit, nothing else.
 */
const SPAWNER_SOURCE = `
const { spawn } = require('node:child_process');
const parentPort = { postMessage: (m) => process.send(m) };
const children = new Map();
// Ambient went away: so does this helper (and the bwrap processes that die with their parent).
process.on('disconnect', () => process.exit(0));
process.on('message', (m) => {
  if (m.op === 'spawn') {
    let child;
    try {
      child = spawn(m.file, m.args, {
        cwd: m.cwd, env: m.env, detached: true, stdio: [m.stdin, 'pipe', 'pipe'],
      });
    } catch (err) {
      parentPort.postMessage({ op: 'error', id: m.id, message: err.message, code: err.code });
      parentPort.postMessage({ op: 'exit', id: m.id, code: null, signal: null });
      return;
    }
    children.set(m.id, child);
    let spawnFailed = false;
    child.on('error', (err) => {
      parentPort.postMessage({
        op: 'error', id: m.id, message: err.message, code: err.code, errno: err.errno,
        syscall: err.syscall,
      });
      if (child.pid === undefined && !spawnFailed) {
        spawnFailed = true;
        children.delete(m.id);
        parentPort.postMessage({ op: 'exit', id: m.id, code: null, signal: null });
      }
    });
    if (child.pid !== undefined) parentPort.postMessage({ op: 'spawned', id: m.id, pid: child.pid });
    for (const fd of [1, 2]) {
      const stream = fd === 1 ? child.stdout : child.stderr;
      if (!stream) continue;
      stream.on('data', (chunk) => {
        parentPort.postMessage({ op: 'out', id: m.id, fd, chunk: new Uint8Array(chunk) });
      });
      stream.on('close', () => parentPort.postMessage({ op: 'out-end', id: m.id, fd }));
      stream.on('error', () => undefined);
    }
    if (child.stdin) child.stdin.on('error', () => undefined);
    child.on('exit', (code, signal) => {
      parentPort.postMessage({ op: 'exit', id: m.id, code, signal });
      children.delete(m.id);
    });
    return;
  }
  const child = children.get(m.id);
  if (!child) return;
  if (m.op === 'stdin') child.stdin?.write(m.chunk);
  else if (m.op === 'stdin-end') child.stdin?.end();
  else if (m.op === 'kill') {
    try { process.kill(-child.pid, 'SIGKILL'); } catch {}
  } else {
    const stream = m.fd === 1 ? child.stdout : child.stderr;
    if (m.op === 'pause') stream?.pause();
    else stream?.resume();
  }
});
`;

interface Pending {
  stdout: PassThrough;
  stderr: PassThrough;
  pid?: number;
  killRequested: boolean;
  /** Streams not ended yet and the exit not reported yet: the entry goes when all three are. */
  outstanding: number;
  startError?: NodeJS.ErrnoException;
  resolveExit(exit: SandboxExit): void;
}

/**
 * Most of a start is waiting for the child to be scheduled and exec (under CPU load), so two
 * helpers start processes side by side; each process stays with the helper that started it.
 */
const SPAWNERS = 2;

/** A spawn helper as its channel sees it: where requests go, and how a process's group is killed. */
export interface SpawnerWorker {
  postMessage(message: ToSpawner): void;
  /** Keeps Ambient alive while the helper has processes running (and not after). */
  ref(): void;
  unref(): void;
  /** SIGKILLs the process group of the process started for `id` (as `pid`). */
  killGroup(id: number, pid: number): void;
}

/** The Node helper, talked to over its IPC channel. */
class NodeSpawnerProcess {
  constructor(private readonly child: ChildProcess) {}

  postMessage(message: ToSpawner): void {
    if (this.child.connected) this.child.send(message);
  }

  ref(): void {
    this.child.channel?.ref();
  }

  unref(): void {
    this.child.channel?.unref();
  }
}

/** A helper on this host: its processes' groups are killed from here. */
function onThisHost(worker: NodeSpawnerProcess | NativeSpawnerProcess): SpawnerWorker {
  return {
    postMessage: (message) => worker.postMessage(message),
    ref: () => worker.ref(),
    unref: () => worker.unref(),
    killGroup: (_id, pid) => killGroup(pid),
  };
}

/**
 * The processes one helper started: their streams and exits, fed by its events (`handle`). The
 * helper is one of this host's (spawnOffLoop) or one inside a sandbox (see SandboxSpawner).
 */
export class SpawnerChannel {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(private readonly worker: SpawnerWorker) {}

  /** `spawn(file, args, {detached: true, stdio: [stdin, 'pipe', 'pipe']})` in the helper. */
  spawn(file: string, args: string[], options: OffLoopSpawnOptions): SandboxProcess {
    const id = this.nextId++;
    const worker = this.worker;
    let resolveExit!: (exit: SandboxExit) => void;
    const exited = new Promise<SandboxExit>((resolve) => (resolveExit = resolve));
    const proc: Pending = {
      stdout: new PassThrough(),
      stderr: new PassThrough(),
      killRequested: false,
      outstanding: 3,
      resolveExit,
    };
    this.pending.set(id, proc);
    worker.ref();
    worker.postMessage({
      op: 'spawn',
      id,
      file,
      args,
      cwd: options.cwd,
      env: options.env,
      stdin: options.stdin,
      ...(options.joinCgroups?.length ? { joinCgroups: options.joinCgroups } : {}),
      ...(options.enterNamespacesOf ? { enterNamespacesOf: options.enterNamespacesOf } : {}),
      ...(options.confine ? { confine: true } : {}),
    });
    const stdin =
      options.stdin === 'pipe'
        ? new Writable({
            write(chunk: Buffer, _encoding, callback) {
              worker.postMessage({ op: 'stdin', id, chunk: new Uint8Array(chunk) });
              callback();
            },
            final(callback) {
              worker.postMessage({ op: 'stdin-end', id });
              callback();
            },
          })
        : null;
    return {
      stdin,
      stdout: proc.stdout,
      stderr: proc.stderr,
      exited,
      kill() {
        if (proc.pid !== undefined) worker.killGroup(id, proc.pid);
        else proc.killRequested = true;
      },
    };
  }

  /** One event of the helper. */
  handle(m: FromSpawner): void {
    const proc = this.pending.get(m.id);
    if (!proc) return;
    switch (m.op) {
      case 'spawned':
        proc.pid = m.pid;
        if (proc.killRequested) this.worker.killGroup(m.id, m.pid);
        return;
      case 'error': {
        const err: NodeJS.ErrnoException = new Error(m.message);
        Object.assign(err, { code: m.code, errno: m.errno, syscall: m.syscall });
        proc.startError ??= err;
        return;
      }
      case 'out': {
        const stream = m.fd === 1 ? proc.stdout : proc.stderr;
        if (stream.destroyed || stream.writableEnded) return;
        // The consumer is slower than the process: hold the process's pipe until it caught up.
        if (!stream.write(Buffer.from(m.chunk.buffer, m.chunk.byteOffset, m.chunk.byteLength))) {
          this.worker.postMessage({ op: 'pause', id: m.id, fd: m.fd });
          stream.once('drain', () => this.worker.postMessage({ op: 'resume', id: m.id, fd: m.fd }));
        }
        return;
      }
      case 'out-end': {
        const stream = m.fd === 1 ? proc.stdout : proc.stderr;
        if (!stream.destroyed) stream.end();
        this.settle(m.id, proc);
        return;
      }
      case 'exit':
        // A process that never started has streams that never opened: end them for the caller.
        if (proc.pid === undefined) {
          proc.stdout.end();
          proc.stderr.end();
          proc.outstanding = 1;
        }
        this.settle(m.id, proc);
        proc.resolveExit({
          code: m.code,
          signal: m.signal,
          ...(proc.startError ? { startError: proc.startError } : {}),
        });
        return;
      case 'ready':
        return;
    }
  }

  /** The helper died (it should not): every process it started is reported ended. */
  fail(err: Error): void {
    for (const [id, proc] of this.pending) {
      this.pending.delete(id);
      if (proc.pid !== undefined) this.worker.killGroup(id, proc.pid);
      proc.stdout.end();
      proc.stderr.end();
      proc.resolveExit({ code: null, signal: null, startError: err });
    }
  }

  private settle(id: number, proc: Pending): void {
    if (--proc.outstanding > 0) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
  }
}

/** Looked up once, at load: the binary is built at install, not while Ambient runs. */
const nativeBinary = nativeSpawnerPath();

/**
 * Whether processes can join a cgroup and enter namespaces between fork and exec (the compiled
 * helper); without it, callers wrap their command in a shell and nsenter for that.
 */
export function preparesInChild(): boolean {
  return nativeBinary !== null;
}

/** The compiled helper this process starts its processes with; null: the Node helper. */
export function compiledSpawner(): string | null {
  return nativeBinary;
}

const spawners: (SpawnerChannel | null)[] = Array.from({ length: SPAWNERS }, () => null);
let nextSlot = 0;

function spawnerFor(slot: number): SpawnerChannel {
  const existing = spawners[slot];
  if (existing) return existing;
  const binary = nativeBinary;
  let channel: SpawnerChannel;
  const failAll = (err: Error): void => {
    if (spawners[slot] === channel) spawners[slot] = null;
    channel.fail(err);
  };
  if (binary) {
    const worker = new NativeSpawnerProcess(binary, (message) => channel.handle(message));
    channel = new SpawnerChannel(onThisHost(worker));
    worker.on('error', (err) => failAll(err ?? new Error('spawner error')));
    worker.on('exit', () => failAll(new Error('the process spawner stopped')));
    worker.unref();
  } else {
    // Its own small node (no NODE_OPTIONS, no loaders): what it forks is a few MB, not Ambient.
    const child = spawn(process.execPath, ['-e', SPAWNER_SOURCE], {
      env: {},
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    const worker = new NodeSpawnerProcess(child);
    channel = new SpawnerChannel(onThisHost(worker));
    child.on('message', (message: FromSpawner) => channel.handle(message));
    child.on('error', (err) => failAll(err));
    child.on('exit', () => failAll(new Error('the process spawner stopped')));
    child.unref();
    worker.unref();
  }
  spawners[slot] = channel;
  return channel;
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** `spawn(file, args, {detached: true, stdio: [stdin, 'pipe', 'pipe']})` in a helper process. */
export function spawnOffLoop(
  file: string,
  args: string[],
  options: OffLoopSpawnOptions,
): SandboxProcess {
  const slot = nextSlot;
  nextSlot = (nextSlot + 1) % SPAWNERS;
  return spawnerFor(slot).spawn(file, args, options);
}
