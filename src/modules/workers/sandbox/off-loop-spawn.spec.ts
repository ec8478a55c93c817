import { spawnOffLoop } from './off-loop-spawn';
import type { SandboxProcess } from './sandbox.types';

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

function collect(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
    stream.on('end', () => resolve(text));
  });
}

function sh(script: string, stdin: 'ignore' | 'pipe' = 'ignore'): SandboxProcess {
  return spawnOffLoop('/bin/sh', ['-c', script], { cwd: '/', env: ENV, stdin });
}

describe('spawnOffLoop', () => {
  it('relays stdout and stderr in order and reports the exit code', async () => {
    const proc = sh('for i in $(seq 1 2000); do echo "line $i"; done; echo oops >&2; exit 3');
    const [out, err, exit] = await Promise.all([
      collect(proc.stdout),
      collect(proc.stderr),
      proc.exited,
    ]);
    expect(out.split('\n').slice(0, -1)).toEqual(
      Array.from({ length: 2000 }, (_, i) => `line ${i + 1}`),
    );
    expect(err).toBe('oops\n');
    expect(exit).toEqual({ code: 3, signal: null });
  });

  it('passes the given environment and working directory only', async () => {
    const proc = spawnOffLoop('/bin/sh', ['-c', 'pwd; echo "$ONLY"; echo "${HOME:-unset}"'], {
      cwd: '/tmp',
      env: { ...ENV, ONLY: 'this' },
      stdin: 'ignore',
    });
    expect(await collect(proc.stdout)).toBe('/tmp\nthis\nunset\n');
  });

  it('pipes stdin when asked', async () => {
    const proc = sh('tr a-z A-Z', 'pipe');
    proc.stdin!.write('hello ');
    proc.stdin!.end('world');
    expect(await collect(proc.stdout)).toBe('HELLO WORLD');
    expect((await proc.exited).code).toBe(0);
  });

  it('reports a program that does not exist as a start error, with ended streams', async () => {
    const proc = spawnOffLoop('/no/such/program', [], { cwd: '/', env: ENV, stdin: 'ignore' });
    const [out, exit] = await Promise.all([collect(proc.stdout), proc.exited]);
    expect(out).toBe('');
    expect(exit.code).toBeNull();
    expect(exit.startError?.code).toBe('ENOENT');
  });

  it('kills the whole process group, also when asked before the process started', async () => {
    const proc = sh('sleep 60 & echo started; wait');
    await new Promise<void>((resolve) => proc.stdout.once('data', () => resolve()));
    proc.kill();
    expect(await proc.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const early = sh('sleep 60');
    early.kill();
    expect((await early.exited).signal).toBe('SIGKILL');
  });

  it('holds a fast producer while its reader is paused, and loses nothing', async () => {
    const proc = sh('head -c 8000000 /dev/zero');
    proc.stdout.pause();
    let received = 0;
    proc.stdout.on('data', (chunk: Buffer) => (received += chunk.length));
    await new Promise((resolve) => setImmediate(resolve));
    proc.stdout.resume();
    await new Promise((resolve) => proc.stdout.on('end', resolve));
    expect(received).toBe(8_000_000);
    expect((await proc.exited).code).toBe(0);
  });

  it('starts many processes at once', async () => {
    const procs = Array.from({ length: 30 }, (_, i) => sh(`echo ${i}`));
    const outs = await Promise.all(procs.map((p) => collect(p.stdout)));
    expect(outs).toEqual(Array.from({ length: 30 }, (_, i) => `${i}\n`));
  }, 60_000);
});
