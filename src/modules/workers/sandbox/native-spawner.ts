import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import type { FromSpawner, ToSpawner } from './spawner-messages';

/**
 * The compiled helper (native/spawner.c, built by `npm ci` and `npm run build` where a C compiler
 * is found). Its forks copy ~1 MB instead of a Node process's page tables, and it joins a
 * sandbox's cgroup and namespaces itself between fork and exec (see the C file for the figures).
 */
export const NATIVE_SPAWNER_RELATIVE_PATH = join('native', 'build', 'ambient-spawner');

const enum Request {
  Spawn = 1,
  Stdin = 2,
  StdinEnd = 3,
  Pause = 4,
  Resume = 5,
  Kill = 6,
}

const enum Event {
  Spawned = 1,
  Error = 2,
  Out = 3,
  OutEnd = 4,
  Exit = 5,
  Ready = 6,
}

const ERRNO_NAMES = new Map(Object.entries(constants.errno).map(([name, no]) => [no, name]));
const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, no]) => [no, name]));

/**
 * A file under the package's root (the first directory up with a package.json) when it exists:
 * where `scripts/build-native.mjs` put a compiled program.
 */
export function builtProgramPath(relativePath: string): string | null {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) {
      const binary = join(dir, relativePath);
      return existsSync(binary) ? binary : null;
    }
    if (dirname(dir) === dir) return null;
  }
}

/**
 * Where the helper binary is: `AMBIENT_PROCESS_SPAWNER=node` asks for the Node helper; otherwise
 * the built binary, if any.
 */
export function nativeSpawnerPath(): string | null {
  if (process.env.AMBIENT_PROCESS_SPAWNER === 'node') return null;
  return builtProgramPath(NATIVE_SPAWNER_RELATIVE_PATH);
}

/** Length-prefixed strings and lists, as the helper reads them. */
class FrameWriter {
  private readonly parts: Buffer[] = [];

  u8(value: number): this {
    this.parts.push(Buffer.from([value]));
    return this;
  }

  u32(value: number): this {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32LE(value >>> 0);
    this.parts.push(b);
    return this;
  }

  i32(value: number): this {
    const b = Buffer.allocUnsafe(4);
    b.writeInt32LE(value);
    this.parts.push(b);
    return this;
  }

  bytes(value: Uint8Array): this {
    this.parts.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    return this;
  }

  str(value: string): this {
    const b = Buffer.from(value, 'utf8');
    return this.u32(b.length).bytes(b);
  }

  list(values: string[]): this {
    this.u32(values.length);
    for (const value of values) this.str(value);
    return this;
  }

  frame(): Buffer {
    const body = Buffer.concat(this.parts);
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32LE(body.length);
    return Buffer.concat([head, body]);
  }
}

export function encode(m: ToSpawner): Buffer {
  const w = new FrameWriter();
  switch (m.op) {
    case 'spawn':
      return w
        .u8(Request.Spawn)
        .u32(m.id)
        .u8(m.stdin === 'pipe' ? 1 : 0)
        .i32(m.enterNamespacesOf?.pid ?? 0)
        .u8(m.enterNamespacesOf?.user ? 1 : 0)
        .str(m.file)
        .str(m.cwd)
        .list([m.file, ...m.args])
        .list(Object.entries(m.env).map(([key, value]) => `${key}=${value}`))
        .list(m.joinCgroups ?? [])
        .u8(m.confine ? 1 : 0)
        .frame();
    case 'stdin':
      return w.u8(Request.Stdin).u32(m.id).bytes(m.chunk).frame();
    case 'stdin-end':
      return w.u8(Request.StdinEnd).u32(m.id).frame();
    case 'pause':
    case 'resume':
      return w
        .u8(m.op === 'pause' ? Request.Pause : Request.Resume)
        .u32(m.id)
        .u8(m.fd)
        .frame();
    case 'kill':
      return w.u8(Request.Kill).u32(m.id).frame();
  }
}

/**
 * Splits the helper's output into frames (a little-endian u32 length, then that many bytes) and
 * hands each frame's body to `onFrame`: feed it every chunk read, in order. A frame longer than
 * `maxFrame` calls `tooLarge` instead, and nothing is read after it.
 */
export function frameReader(
  onFrame: (body: Buffer) => void,
  maxFrame = Infinity,
  tooLarge: () => void = () => undefined,
): (chunk: Buffer) => void {
  let buffered: Buffer = Buffer.alloc(0);
  let stopped = false;
  return (chunk) => {
    if (stopped) return;
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    let offset = 0;
    while (buffered.length - offset >= 4) {
      const length = buffered.readUInt32LE(offset);
      if (length > maxFrame) {
        stopped = true;
        buffered = Buffer.alloc(0);
        return tooLarge();
      }
      if (buffered.length - offset - 4 < length) break;
      const body = buffered.subarray(offset + 4, offset + 4 + length);
      offset += 4 + length;
      onFrame(body);
    }
    buffered = buffered.subarray(offset);
  };
}

/** One event frame's body as the message the Node helper sends for it. */
export function decode(body: Buffer, file: string): FromSpawner | null {
  const op = body[0] as Event;
  const id = body.readUInt32LE(1);
  switch (op) {
    case Event.Spawned:
      return { op: 'spawned', id, pid: body.readInt32LE(5) };
    case Event.Error: {
      const errno = body.readInt32LE(5);
      const step = body.subarray(13, 13 + body.readUInt32LE(9)).toString('utf8');
      const code = ERRNO_NAMES.get(errno) ?? `E${errno}`;
      // As Node reports a failed spawn; a failed preparation says which step failed.
      const message =
        step === 'spawn'
          ? `spawn ${file} ${code}`
          : `spawn ${file}: ${step} failed in the new process (${code})`;
      return { op: 'error', id, message, code, errno: -errno, syscall: `spawn ${file}` };
    }
    case Event.Out:
      return { op: 'out', id, fd: body[5] as 1 | 2, chunk: body.subarray(6) };
    case Event.OutEnd:
      return { op: 'out-end', id, fd: body[5] as 1 | 2 };
    case Event.Exit: {
      const code = body.readInt32LE(5);
      const signal = body.readInt32LE(9);
      return {
        op: 'exit',
        id,
        code: code < 0 ? null : code,
        signal: signal === 0 ? null : (SIGNAL_NAMES.get(signal) ?? String(signal)),
      };
    }
    case Event.Ready:
      return { op: 'ready', id };
    default:
      return null;
  }
}

/** A helper's frames read as untrusted (one inside a sandbox): the bound, and what breaks it. */
export interface UntrustedFrames {
  /** The largest frame taken; anything longer is a violation. */
  maxFrame: number;
  /** Called once for a frame too long, or too short for its kind; nothing is read after it. */
  violation: () => void;
}

/**
 * A helper's two ends: requests written to `input`, events read from `output` and handed to
 * `onMessage`, with the file of each started process kept for error messages as Node words them.
 * With `untrusted`, a frame that breaks the protocol ends the reading instead of throwing.
 */
export class SpawnerFrames {
  private readonly files = new Map<number, string>();

  constructor(
    private readonly input: Writable,
    output: Readable,
    onMessage: (message: FromSpawner) => void,
    untrusted?: UntrustedFrames,
  ) {
    let broken = false;
    const violation = (): void => {
      broken = true;
      untrusted?.violation();
    };
    const onFrame = (body: Buffer): void => {
      if (broken) return;
      let message: FromSpawner | null;
      try {
        message = decode(body, this.files.get(body.readUInt32LE(1)) ?? '');
      } catch (err) {
        // Shorter than its kind's fields.
        if (untrusted) return violation();
        throw err;
      }
      if (!message) return;
      if (message.op === 'exit') this.files.delete(message.id);
      onMessage(message);
    };
    output.on('data', frameReader(onFrame, untrusted?.maxFrame, violation));
  }

  post(message: ToSpawner): void {
    if (message.op === 'spawn') this.files.set(message.id, message.file);
    if (this.input.writable) this.input.write(encode(message));
  }
}

/** The compiled helper, talked to over its stdin and stdout. */
export class NativeSpawnerProcess {
  private readonly child: ChildProcess;
  private readonly frames: SpawnerFrames;

  constructor(binary: string, onMessage: (message: FromSpawner) => void) {
    this.child = spawn(binary, [], { env: {}, stdio: ['pipe', 'pipe', 'inherit'] });
    // Only its stdout keeps Ambient alive, and only while processes run (ref/unref).
    this.child.unref();
    this.child.stdin!.on('error', () => undefined);
    this.frames = new SpawnerFrames(this.child.stdin!, this.child.stdout!, onMessage);
  }

  on(event: 'error' | 'exit', listener: (err?: Error) => void): void {
    this.child.on(event, (err: unknown) => listener(err instanceof Error ? err : undefined));
  }

  postMessage(message: ToSpawner): void {
    this.frames.post(message);
  }

  /** Keeps Ambient alive while the helper has processes running (and not after). */
  ref(): void {
    (this.child.stdout as Socket).ref();
  }

  unref(): void {
    (this.child.stdout as Socket).unref();
  }
}
