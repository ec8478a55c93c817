import type Dockerode from 'dockerode';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { constants, openSync } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import type { SandboxSpawner } from '../../sandbox-spawner';
import type { SandboxProcess } from '../../sandbox.types';
import { forgetSlots, prepareSlots } from './container-launcher';
import {
  DockerExecProcess,
  type DockerExecOptions,
  type DockerLauncherTarget,
} from './docker-exec-process';

/** One frame of docker's multiplexed stream (1: stdout, 2: stderr). */
function frame(stream: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

/** A container whose every exec prints `fallback` through the wrapper's protocol. */
function fakeContainer(): { container: Dockerode.Container; execs: () => number } {
  let execs = 0;
  const container = {
    exec: async () => {
      execs++;
      return {
        start: async () => {
          const stream = new PassThrough();
          stream.end(Buffer.concat([frame(2, '42\nexec\n'), frame(1, 'fallback\n')]));
          return stream;
        },
        inspect: async () => ({ Running: false, ExitCode: 0 }),
      };
    },
  } as unknown as Dockerode.Container;
  return { container, execs: () => execs };
}

function collect(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve) =>
    stream.on('end', () => resolve(Buffer.concat(chunks).toString())),
  );
}

/** `echo hi` in the container, as a sandbox starts it (its launcher and spawner as given). */
function echoHi(
  container: Dockerode.Container,
  options: Pick<DockerExecOptions, 'launcher' | 'spawner'> & { stdin?: boolean },
): DockerExecProcess {
  return new DockerExecProcess(Promise.resolve(container), {
    file: 'echo',
    args: ['hi'],
    cwd: '/workspace',
    env: { PATH: '/bin' },
    stdin: options.stdin ?? false,
    user: '1000:1000',
    killGroup: async () => undefined,
    launcher: options.launcher ?? null,
    spawner: options.spawner,
  });
}

describe('DockerExecProcess through a launcher that does not acknowledge', () => {
  const fifo = 'launch-test';
  let dir: string;
  /** Holds the launcher's FIFO open, as a launcher alive but unable to fork for anything would. */
  let wedged: FileHandle;
  let target: DockerLauncherTarget;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ambient-exec-'));
    await promisify(execFile)('mkfifo', ['-m', '600', join(dir, fifo)]);
    await prepareSlots(dir);
    wedged = await open(join(dir, fifo), constants.O_RDWR | constants.O_NONBLOCK);
    target = {
      hostDir: dir,
      insideDir: dir,
      fifo,
      uid: 1000,
      gid: 1000,
      track: () => () => undefined,
      pausedUntil: 0,
      ackTimeoutMs: 50,
    };
  });

  afterEach(async () => {
    await wedged.close();
    forgetSlots(dir);
    await rm(dir, { recursive: true, force: true });
  });

  function spawn(
    container: Dockerode.Container,
    spawner?: Promise<SandboxSpawner | null>,
  ): DockerExecProcess {
    return echoHi(container, { launcher: target, spawner });
  }

  it("never hands a command to the shell launcher's FIFO of a container whose spawner did not start", async () => {
    const { container, execs } = fakeContainer();
    const child = spawn(container, Promise.resolve(null));
    const [stdout, exit] = await Promise.all([collect(child.stdout), child.exited]);
    child.stderr.resume();
    expect({ stdout, exit }).toEqual({ stdout: 'fallback\n', exit: { code: 0, signal: null } });
    expect(child.startedBy).toBe('exec');
    // Not even tried: the launcher would have been left aside after its wait.
    expect(target.pausedUntil).toBe(0);
    expect(execs()).toBe(1);
  });

  it('runs the command once through docker exec after the wait, and leaves the launcher aside', async () => {
    const { container, execs } = fakeContainer();
    const child = spawn(container);
    const [stdout, exit] = await Promise.all([collect(child.stdout), child.exited]);
    child.stderr.resume();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(stdout).toBe('fallback\n');
    expect(child.startedBy).toBe('exec');
    expect(execs()).toBe(1);
    expect(target.pausedUntil).toBeGreaterThan(performance.now());
    // The next command does not wait for the launcher again.
    const next = spawn(container);
    next.stdout.resume();
    next.stderr.resume();
    await next.exited;
    expect(execs()).toBe(2);
  });

  it('ends a command killed before the acknowledgement without running it anywhere', async () => {
    target.ackTimeoutMs = 60_000;
    const { container, execs } = fakeContainer();
    const child = spawn(container);
    child.stdout.resume();
    child.stderr.resume();
    // Killed once its id is with the launcher.
    const fd = openSync(join(dir, fifo), constants.O_RDONLY | constants.O_NONBLOCK);
    const ids = new Socket({ fd, readable: true, writable: false });
    await once(ids, 'data');
    ids.destroy();
    child.kill();
    expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(execs()).toBe(0);
  });
});

describe('DockerExecProcess with a container spawner', () => {
  /** A spawner whose every start fails with `code`, as one that could not fork (or was gone). */
  function failingSpawner(code: string): SandboxSpawner {
    return {
      spawn: (file: string): SandboxProcess => ({
        stdin: null,
        stdout: new PassThrough().end(),
        stderr: new PassThrough().end(),
        exited: Promise.resolve({
          code: null,
          signal: null,
          startError: Object.assign(new Error(`spawn ${file} ${code}`), { code }),
        }),
        kill: () => undefined,
      }),
    } as unknown as SandboxSpawner;
  }

  function spawn(
    container: Dockerode.Container,
    spawner: SandboxSpawner | null,
    { stdin = false }: { stdin?: boolean } = {},
  ): DockerExecProcess {
    return echoHi(container, { stdin, spawner: Promise.resolve(spawner) });
  }

  async function finish(child: DockerExecProcess): Promise<{ stdout: string; exit: unknown }> {
    child.stderr.resume();
    const [stdout, exit] = await Promise.all([collect(child.stdout), child.exited]);
    return { stdout, exit };
  }

  it('tries docker exec once when the spawner could not fork (nothing ran), keeping only its output', async () => {
    const { container, execs } = fakeContainer();
    const child = spawn(container, failingSpawner('EWOULDBLOCK'));
    expect(await finish(child)).toEqual({ stdout: 'fallback\n', exit: { code: 0, signal: null } });
    expect(child.startedBy).toBe('exec');
    expect(execs()).toBe(1);
  });

  it('tries docker exec for a stdin command only when the spawner was gone before it', async () => {
    const gone = fakeContainer();
    const child = spawn(gone.container, failingSpawner('ESRCH'), { stdin: true });
    child.stdin!.end();
    expect(await finish(child)).toEqual({ stdout: 'fallback\n', exit: { code: 0, signal: null } });
    expect(gone.execs()).toBe(1);

    // After a failed fork, some of its stdin may have been taken: it says so instead.
    const full = fakeContainer();
    const refused = spawn(full.container, failingSpawner('EWOULDBLOCK'), { stdin: true });
    refused.stdin!.end();
    const { exit } = await finish(refused);
    expect(exit).toMatchObject({ code: null, startError: { code: 'EWOULDBLOCK' } });
    expect(full.execs()).toBe(0);
  });
});
