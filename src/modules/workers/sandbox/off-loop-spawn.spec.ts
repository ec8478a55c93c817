import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../../../test/support/wait';
import { decode, encode, frameReader, nativeSpawnerPath } from './native-spawner';
import type * as OffLoopSpawn from './off-loop-spawn';
import type { SandboxProcess } from './sandbox.types';
import type { FromSpawner } from './spawner-messages';
import {
  loadedWithSpawnHelper,
  type SpawnHelper,
} from '../../../../test/support/spawn-helper-choice';

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

/** A process's state letter (R, S, Z …) from /proc; null once it is gone. */
function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
  } catch {
    return null;
  }
}

/** Every event the helper (spoken to directly) sends, decoded. */
function onMessages(helper: ChildProcess, listener: (message: FromSpawner) => void): void {
  helper.stdout!.on(
    'data',
    frameReader((body) => {
      const message = decode(body, '');
      if (message) listener(message);
    }),
  );
}

function collect(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
    stream.on('end', () => resolve(text));
  });
}

/** off-loop-spawn as loaded with AMBIENT_PROCESS_SPAWNER set to `helper` (it looks once). */
function loadWith(helper: SpawnHelper): typeof OffLoopSpawn {
  return loadedWithSpawnHelper(helper, () =>
    jest.requireActual<typeof OffLoopSpawn>('./off-loop-spawn'),
  );
}

const hasCompiler = ['cc', 'gcc', 'clang'].some((cc) => {
  try {
    execFileSync('sh', ['-c', `command -v ${cc}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});

it('uses the compiled helper where a C compiler built it, the Node one when asked', () => {
  // npm ci builds it (postinstall) wherever a compiler is: CI's machines have one.
  expect(loadWith('native').preparesInChild()).toBe(hasCompiler);
  expect(loadWith('node').preparesInChild()).toBe(false);
});

describe.each(['native', 'node'] as const)('spawnOffLoop with the %s helper', (helper) => {
  const { spawnOffLoop } = loadWith(helper);
  const sh = (script: string, stdin: 'ignore' | 'pipe' = 'ignore'): SandboxProcess =>
    spawnOffLoop('/bin/sh', ['-c', script], { cwd: '/', env: ENV, stdin });

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
    expect(exit.startError?.message).toBe('spawn /no/such/program ENOENT');
  });

  it('finds a bare program name on the PATH of the environment it is given', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spawn-path-'));
    await writeFile(join(dir, 'only-here'), '#!/bin/sh\necho found "$1"\n', { mode: 0o755 });
    const proc = spawnOffLoop('only-here', ['it'], {
      cwd: '/',
      env: { PATH: `/nonexistent:${dir}:${ENV.PATH}` },
      stdin: 'ignore',
    });
    expect(await collect(proc.stdout)).toBe('found it\n');
    await rm(dir, { recursive: true });
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

(hasCompiler ? describe : describe.skip)('the compiled helper, between fork and exec', () => {
  const { spawnOffLoop } = loadWith('native');

  it('writes the process into the cgroup.procs files it is given before the program runs', async () => {
    // A cgroup.procs file takes "0" for "the writer": a plain file shows what was written.
    const dir = await mkdtemp(join(tmpdir(), 'spawn-cgroup-'));
    const procs = [join(dir, 'a'), join(dir, 'b')];
    await Promise.all(procs.map((file) => writeFile(file, '')));
    const proc = spawnOffLoop('/bin/sh', ['-c', 'echo ran'], {
      cwd: '/',
      env: ENV,
      stdin: 'ignore',
      joinCgroups: procs,
    });
    expect(await collect(proc.stdout)).toBe('ran\n');
    expect(procs.map((file) => readFileSync(file, 'utf8'))).toEqual(['0', '0']);
    await rm(dir, { recursive: true });
  });

  it('does not run the program when it cannot join the cgroup, and says why', async () => {
    const proc = spawnOffLoop('/bin/sh', ['-c', 'echo ran'], {
      cwd: '/',
      env: ENV,
      stdin: 'ignore',
      joinCgroups: ['/nonexistent/cgroup.procs'],
    });
    const [out, exit] = await Promise.all([collect(proc.stdout), proc.exited]);
    expect(out).toBe('');
    expect(exit.code).toBeNull();
    expect(exit.startError?.code).toBe('ENOENT');
    expect(exit.startError?.message).toBe(
      'spawn /bin/sh: cgroup failed in the new process (ENOENT)',
    );
  });

  /** What Ambient's sandboxes always ask of `--confine`, and a /usr to run a shell from. */
  const CONFINE = ['--unshare-user', '--unshare-pid', '--as-pid-1', '--cap-drop', 'ALL'];
  CONFINE.push('--die-with-parent', '--new-session', '--ro-bind', '/usr', '/usr');
  for (const dir of ['bin', 'lib', 'lib64']) CONFINE.push('--symlink', `usr/${dir}`, `/${dir}`);

  it('makes a sandbox of its own `--confine` in the child it forks, which it moves into the cgroup first', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spawn-confine-'));
    const procs = join(dir, 'cgroup.procs');
    await writeFile(procs, '');
    const proc = spawnOffLoop(
      nativeSpawnerPath()!,
      ['--confine', ...CONFINE, '--', '/bin/sh', '-c', 'echo "$$ $PATH"'],
      { cwd: '/', env: ENV, stdin: 'ignore', joinCgroups: [procs], confine: true },
    );
    const [out, exit] = await Promise.all([collect(proc.stdout), proc.exited]);
    expect(out).toBe(`1 ${ENV.PATH}\n`);
    expect(exit).toEqual({ code: 0, signal: null });
    // The helper wrote its child's pid: no exec of `--confine` joined the group itself ("0"),
    // then made the sandbox in a process of its own.
    expect(readFileSync(procs, 'utf8')).toMatch(/^[1-9]\d*$/);
    await rm(dir, { recursive: true });
  });

  it('runs a `--confine` of another program as that program', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spawn-confine-'));
    const other = join(dir, 'other-spawner');
    await writeFile(other, '#!/bin/sh\necho "other $1"\n', { mode: 0o755 });
    const proc = spawnOffLoop(other, ['--confine', ...CONFINE, '--', '/bin/true'], {
      cwd: '/',
      env: ENV,
      stdin: 'ignore',
      confine: true,
    });
    expect(await collect(proc.stdout)).toBe('other --confine\n');
    expect((await proc.exited).code).toBe(0);
    await rm(dir, { recursive: true });
  });

  it('kills what it started once Ambient is gone (its stdin closed), whatever that was', async () => {
    // The helper itself, as Ambient talks to it; ending its stdin is what a killed worker does.
    const helper = spawn(nativeSpawnerPath()!, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    const spawned = new Promise<number>((resolve) => {
      onMessages(helper, (message) => message.op === 'spawned' && resolve(message.pid));
    });
    // Its own session, as every process it starts: nothing of the helper's group reaches it.
    helper.stdin.write(
      encode({
        op: 'spawn',
        id: 1,
        file: '/bin/sleep',
        args: ['600'],
        cwd: '/',
        env: ENV,
        stdin: 'ignore',
      }),
    );
    const pid = await spawned;
    expect(processState(pid)).toMatch(/^[RS]$/);
    helper.stdin.end();
    await new Promise((resolve) => helper.once('exit', resolve));
    // Gone, or a zombie waiting for this container's init to reap it: not running any more.
    await waitFor(
      async () => processState(pid),
      (state) => state === null || state === 'Z',
      { timeoutMs: 10_000, what: 'the sleeper to be killed' },
    );
  });

  it("reaps the pid 1 of a bwrap sandbox, so its command's CPU counts as Ambient's children's", async () => {
    const helper = spawn(nativeSpawnerPath()!, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise<void>((resolve) => {
      onMessages(helper, (message) => message.op === 'exit' && resolve());
    });
    // ~0.2 s of CPU in the sandbox's command, which its pid 1 reaps; bwrap itself exits
    // without waiting for that pid 1.
    const busy = 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done';
    const args = ['--unshare-user', '--unshare-pid', '--ro-bind', '/usr', '/usr'];
    for (const dir of ['bin', 'lib', 'lib64']) args.push('--symlink', `usr/${dir}`, `/${dir}`);
    helper.stdin.write(
      encode({
        op: 'spawn',
        id: 1,
        file: 'bwrap',
        args: [...args, '--', '/bin/sh', '-c', busy],
        cwd: '/',
        env: ENV,
        stdin: 'ignore',
      }),
    );
    await exited;
    const childrenCpuMs = () => {
      const stat = readFileSync(`/proc/${helper.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[13]) + Number(fields[14])) * 10;
    };
    await waitFor(
      async () => childrenCpuMs(),
      (ms) => ms >= 100,
      {
        timeoutMs: 10_000,
        what: "the sandbox's CPU in the helper's children's",
      },
    );
    helper.stdin.end();
  });

  it("does not run the program when the namespaces' process is gone", async () => {
    const pid = Number(execFileSync('sh', ['-c', 'echo $$']).toString()); // reaped already
    const proc = spawnOffLoop('/bin/sh', ['-c', 'echo ran'], {
      cwd: '/',
      env: ENV,
      stdin: 'ignore',
      enterNamespacesOf: { pid, user: true },
    });
    const [out, exit] = await Promise.all([collect(proc.stdout), proc.exited]);
    expect(out).toBe('');
    expect(exit.startError?.message).toMatch(
      /^spawn \/bin\/sh: setns failed in the new process \(ENOENT\)$/,
    );
  });
});

describe("the compiled helper's frames", () => {
  it('come out whole and in order, however its output is cut', () => {
    const frame = (text: string) => {
      const body = Buffer.from(text);
      const length = Buffer.alloc(4);
      length.writeUInt32LE(body.length);
      return Buffer.concat([length, body]);
    };
    const stream = Buffer.concat([frame('one'), frame(''), frame('three'), frame('x'.repeat(300))]);
    for (const cut of [1, 2, 3, 5, 7, stream.length]) {
      const bodies: string[] = [];
      const read = frameReader((body) => bodies.push(body.toString()));
      for (let at = 0; at < stream.length; at += cut) read(stream.subarray(at, at + cut));
      expect(bodies).toEqual(['one', '', 'three', 'x'.repeat(300)]);
    }
  });
});
