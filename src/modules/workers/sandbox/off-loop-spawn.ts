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
  else {
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

/** The Node helper, talked to over its IPC channel. */
class NodeSpawnerProcess {
  constructor(private readonly child: ChildProcess) {}

  postMessage(message: ToSpawner): void {
    if (this.child.connected) this.child.send(message);
  }

  /** Keeps Ambient alive while the helper has processes running (and not after). */
  ref(): void {
    this.child.channel?.ref();
  }

  unref(): void {
    this.child.channel?.unref();
  }
}

interface Spawner {
  worker: NodeSpawnerProcess | NativeSpawnerProcess;
  pending: Map<number, Pending>;
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

const spawners: (Spawner | null)[] = Array.from({ length: SPAWNERS }, () => null);
let nextId = 1;

function spawnerFor(id: number): Spawner {
  const slot = id % SPAWNERS;
  const existing = spawners[slot];
  if (existing) return existing;
  const binary = nativeBinary;
  let spawner: Spawner;
  if (binary) {
    const pending = new Map<number, Pending>();
    const worker = new NativeSpawnerProcess(binary, (message) => onMessage(spawner, message));
    spawner = { worker, pending };
    worker.on('error', (err) => failAll(slot, spawner, err ?? new Error('spawner error')));
    worker.on('exit', () => failAll(slot, spawner, new Error('the process spawner stopped')));
  } else {
    // Its own small node (no NODE_OPTIONS, no loaders): what it forks is a few MB, not Ambient.
    const child = spawn(process.execPath, ['-e', SPAWNER_SOURCE], {
      env: {},
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    spawner = { worker: new NodeSpawnerProcess(child), pending: new Map() };
    child.on('message', (message: FromSpawner) => onMessage(spawner, message));
    child.on('error', (err) => failAll(slot, spawner, err));
    child.on('exit', () => failAll(slot, spawner, new Error('the process spawner stopped')));
    child.unref();
  }
  spawner.worker.unref();
  spawners[slot] = spawner;
  return spawner;
}

function onMessage({ worker, pending }: Spawner, m: FromSpawner): void {
  const proc = pending.get(m.id);
  if (!proc) return;
  switch (m.op) {
    case 'spawned':
      proc.pid = m.pid;
      if (proc.killRequested) killGroup(m.pid);
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
        worker.postMessage({ op: 'pause', id: m.id, fd: m.fd });
        stream.once('drain', () => worker.postMessage({ op: 'resume', id: m.id, fd: m.fd }));
      }
      return;
    }
    case 'out-end': {
      const stream = m.fd === 1 ? proc.stdout : proc.stderr;
      if (!stream.destroyed) stream.end();
      settle({ worker, pending }, m.id, proc);
      return;
    }
    case 'exit':
      // A process that never started has streams that never opened: end them for the caller.
      if (proc.pid === undefined) {
        proc.stdout.end();
        proc.stderr.end();
        proc.outstanding = 1;
      }
      settle({ worker, pending }, m.id, proc);
      proc.resolveExit({
        code: m.code,
        signal: m.signal,
        ...(proc.startError ? { startError: proc.startError } : {}),
      });
      return;
  }
}

function settle({ worker, pending }: Spawner, id: number, proc: Pending): void {
  if (--proc.outstanding > 0) return;
  pending.delete(id);
  if (pending.size === 0) worker.unref();
}

/** The helper died (it should not): every process it started is reported ended. */
function failAll(slot: number, spawner: Spawner, err: Error): void {
  if (spawners[slot] === spawner) spawners[slot] = null;
  const { pending } = spawner;
  for (const [id, proc] of pending) {
    pending.delete(id);
    if (proc.pid !== undefined) killGroup(proc.pid);
    proc.stdout.end();
    proc.stderr.end();
    proc.resolveExit({ code: null, signal: null, startError: err });
  }
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
  const id = nextId++;
  const { worker, pending } = spawnerFor(id);
  let resolveExit!: (exit: SandboxExit) => void;
  const exited = new Promise<SandboxExit>((resolve) => (resolveExit = resolve));
  const proc: Pending = {
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    killRequested: false,
    outstanding: 3,
    resolveExit,
  };
  pending.set(id, proc);
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
      if (proc.pid !== undefined) killGroup(proc.pid);
      else proc.killRequested = true;
    },
  };
}
