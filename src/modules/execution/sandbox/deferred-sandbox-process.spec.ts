import { PassThrough, Readable } from 'node:stream';
import { deferredSandboxProcess } from './deferred-sandbox-process';
import type { SandboxExit, SandboxProcess } from './sandbox.types';

/** A process that echoes its stdin to stdout and exits 0 once stdin ends. */
function echoProcess(): SandboxProcess & { killed: boolean } {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdin.pipe(stdout);
  const proc = {
    stdin,
    stdout,
    stderr,
    killed: false,
    exited: new Promise<SandboxExit>((resolve) =>
      stdout.on('end', () => {
        stderr.end();
        resolve({ code: 0, signal: null });
      }),
    ),
    kill: () => {
      proc.killed = true;
    },
  };
  return proc;
}

async function textOf(stream: Readable): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}

function deferred<T>(): {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: Error) => void;
} {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('deferredSandboxProcess', () => {
  it('starts once ready with its value, passing stdin written before the start through', async () => {
    const ready = deferred<string>();
    const start = jest.fn((_value: string) => echoProcess());
    const proc = deferredSandboxProcess(ready.promise, start, 'pipe');
    proc.stdin!.write('written before the start\n');
    proc.stdin!.end();
    await Promise.resolve();
    expect(start).not.toHaveBeenCalled();
    ready.resolve('namespace');
    await expect(textOf(proc.stdout)).resolves.toBe('written before the start\n');
    await expect(proc.exited).resolves.toEqual({ code: 0, signal: null });
    expect(start).toHaveBeenCalledWith('namespace');
  });

  it('never starts when killed before ready, and ends as killed', async () => {
    const ready = deferred<null>();
    const start = jest.fn(() => echoProcess());
    const proc = deferredSandboxProcess(ready.promise, start, 'ignore');
    proc.kill();
    ready.resolve(null);
    await expect(proc.exited).resolves.toEqual({ code: null, signal: 'SIGKILL' });
    await expect(textOf(proc.stdout)).resolves.toBe('');
    await expect(textOf(proc.stderr)).resolves.toBe('');
    expect(start).not.toHaveBeenCalled();
  });

  it('kills the started process', async () => {
    const started = echoProcess();
    const proc = deferredSandboxProcess(Promise.resolve(1), () => started, 'pipe');
    await new Promise((resolve) => setImmediate(resolve));
    proc.kill();
    expect(started.killed).toBe(true);
    proc.stdin!.end();
    await proc.exited;
  });

  it('ends as not started when the start throws or ready rejects', async () => {
    const thrown = deferredSandboxProcess(
      Promise.resolve(1),
      () => {
        throw new Error('spawn failed');
      },
      'ignore',
    );
    await expect(thrown.exited).resolves.toMatchObject({
      code: null,
      startError: expect.objectContaining({ message: 'spawn failed' }),
    });
    const rejected = deferredSandboxProcess(
      Promise.reject(new Error('no namespace')),
      () => echoProcess(),
      'ignore',
    );
    await expect(rejected.exited).resolves.toMatchObject({
      startError: expect.objectContaining({ message: 'no namespace' }),
    });
    await expect(textOf(rejected.stdout)).resolves.toBe('');
  });
});
