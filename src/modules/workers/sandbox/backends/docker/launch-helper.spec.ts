import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compiledSpawner } from '../../off-loop-spawn';

/**
 * The compiled spawn helper's `--as` mode, which a docker container's launcher runs as root to
 * start a command as the sandbox user (see run_as in native/spawner.c): here on this host, as
 * root, with the user nobody. Needs root (setting another user) and the compiled helper (built by
 * `npm ci` wherever a C compiler is; CI installs one).
 */
const helper = compiledSpawner();
const runnable = process.getuid?.() === 0 && helper !== null ? describe : describe.skip;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function runAs(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(helper!, ['--as', '65534', '65534', ...args], (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

runnable('the compiled helper starting a container command as the sandbox user (--as)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ambient-launch-helper-'));
    await chmod(dir, 0o755); // the user's working directory
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('says its pid and exec as the wrapper does, then runs the program as the user, with no capability, in a session of its own, with only the variables given', async () => {
    const script = [
      'echo "$(id -u) $(id -g) $(id -G)"',
      'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status | tr -s "\\t" " "',
      'echo "session $(($(ps -o sid= -p $$)))"',
      'pwd',
      // What the shell was given (it adds variables of its own to `env`'s).
      'tr "\\0" "\\n" < /proc/$$/environ',
    ].join('; ');
    const run = await runAs([
      '--wrapper',
      dir,
      '/nowhere:/usr/bin:/bin',
      '2',
      'GREETING=hello there',
      'PATH=/usr/bin:/bin',
      'sh',
      '-c',
      script,
    ]);
    const [pid, said] = run.stderr.split('\n');
    expect(said).toBe('exec');
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n')).toEqual([
      '65534 65534 65534',
      'CapInh: 0000000000000000',
      'CapPrm: 0000000000000000',
      'CapEff: 0000000000000000',
      'CapBnd: 0000000000000000',
      'CapAmb: 0000000000000000',
      `session ${pid}`,
      dir,
      'GREETING=hello there',
      'PATH=/usr/bin:/bin',
      '',
    ]);
  });

  it('says enoent for a directory or a program that is not there, and runs nothing (127)', async () => {
    const noDir = await runAs(['--wrapper', join(dir, 'gone'), '/bin', '0', 'true']);
    expect(noDir.code).toBe(127);
    expect(noDir.stderr).toMatch(/^\d+\nenoent cwd\n$/);
    const noProgram = await runAs(['--wrapper', dir, '/usr/bin:/bin', '0', 'no-such-program']);
    expect(noProgram.code).toBe(127);
    expect(noProgram.stderr).toMatch(/^\d+\nenoent program\n$/);
    // A path is taken as it is, relative to the directory, never looked up.
    const notFile = await runAs(['--wrapper', dir, '/usr/bin:/bin', '0', './true']);
    expect(notFile.stderr).toMatch(/^\d+\nenoent program\n$/);
  });

  it('runs a script as the user with `--`, keeping its own environment', async () => {
    const run = await runAs(['--', '/bin/sh', '-c', 'echo "$0 $(id -u)"', 'ambient-emptying']);
    expect(run).toEqual({ code: 0, stdout: 'ambient-emptying 65534\n', stderr: '' });
  });

  it('runs a program without a #! line as a shell script, as execvp (and the wrapper) did', async () => {
    const file = join(dir, 'plain-script');
    await writeFile(file, 'echo "ran as $(id -u): $*"\n', { mode: 0o755 });
    const run = await runAs([
      '--wrapper',
      dir,
      dir,
      '1',
      'PATH=/usr/bin:/bin',
      'plain-script',
      'a',
    ]);
    expect(run.stdout).toBe('ran as 65534: a\n');
    expect(run.code).toBe(0);
  });

  it('refuses arguments it does not understand, before it changes anything', async () => {
    expect((await runAs(['--sideways', 'sh'])).code).toBe(64);
    // Refused before its session and user change: it says no pid, as nothing ran.
    const badCount = await runAs(['--wrapper', dir, '/bin', 'x', 'true', 'extra']);
    expect(badCount).toEqual({ code: 64, stdout: '', stderr: '' });
    const noUser = await new Promise<number>((resolve) =>
      execFile(helper!, ['--as', '', '0', '--', '/bin/true'], (error) =>
        resolve(error ? Number(error.code) : 0),
      ),
    );
    expect(noUser).toBe(64);
  });
});
