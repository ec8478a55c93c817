import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { chmod, mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '../../../../../../test/support/wait';
import {
  forgetSlots,
  launch,
  LAUNCH_HELPER,
  LAUNCHER,
  launcherListens,
  makeFifos,
  prepareSlots,
  shellQuote,
  supervisorScript,
  type LaunchedCommand,
} from './container-launcher';

const WORDS = ['plain', "it's", '"double" $HOME `id` $(id) \\n', 'new\nline', '', '--', '-x', '*'];

describe('makeFifos', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'ambient-fifos-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('makes root-only FIFOs, and says why when it cannot', async () => {
    const paths = ['a', 'b', '-dash'].map((name) => join(dir, name));
    await makeFifos(paths);
    for (const path of paths) {
      const made = await stat(path);
      expect(made.isFIFO()).toBe(true);
      expect(made.mode & 0o777).toBe(0o600);
    }
    await expect(makeFifos([paths[0]])).rejects.toThrow(/mkfifo failed: .*File exists/);
  });
});

describe('container launcher scripts', () => {
  it('quotes every argument so that the shell gives it back byte for byte', async () => {
    const script = `printf '%s\\0' ${WORDS.map(shellQuote).join(' ')}`;
    const { stdout } = await promisify(execFile)('/bin/sh', ['-c', script]);
    expect(stdout.split('\0').slice(0, -1)).toEqual(WORDS);
  });

  it('waits for the word of the host, then runs the wrapper as the user with no capability, its own session and no status descriptor', () => {
    const script = supervisorScript('/run/ambient-killer/c1', {
      wrapper: 'echo "$@"',
      args: ['ambient-exec', "a'b"],
      uid: 1000,
      gid: 1000,
    });
    expect(script).toContain(
      "setsid setpriv --reuid=1000 --regid=1000 --clear-groups --inh-caps=-all --bounding-set=-all -- /bin/sh -c 'echo \"$@\"' 'ambient-exec' 'a'\\''b' </dev/null >&5 2>&6 5>&- 6>&- 4>&- &",
    );
    expect(script.split('\n').slice(0, 6)).toEqual([
      "exec 7<'/run/ambient-killer/c1'/go",
      'echo a >&4',
      'read -r word <&7',
      'exec 7<&-',
      '[ "$word" = go ] || exit 0',
      "exec 5>'/run/ambient-killer/c1'/out 6>'/run/ambient-killer/c1'/err",
    ]);
    expect(script).toContain('echo "$?" >&4');
  });

  it('starts the command through the compiled helper where the container has it, else as before', () => {
    const script = supervisorScript('/run/ambient-killer/c2', {
      wrapper: 'echo "$@"',
      args: ['ambient-exec', "a'b"],
      uid: 1000,
      gid: 1000,
      helperArgs: ['--wrapper', "a'b"],
    });
    const io = '</dev/null >&5 2>&6 5>&- 6>&- 4>&- &';
    expect(script).toContain(
      [
        `if [ -x ${LAUNCH_HELPER} ]; then ${LAUNCH_HELPER} --as 1000 1000 '--wrapper' 'a'\\''b' ${io}`,
        `else setsid setpriv --reuid=1000 --regid=1000 --clear-groups --inh-caps=-all --bounding-set=-all -- /bin/sh -c 'echo "$@"' 'ambient-exec' 'a'\\''b' ${io}`,
        'fi',
        'exec 5>&- 6>&-',
      ].join('\n'),
    );
  });
});

/** Setting another user and clearing capabilities (setpriv) needs root. */
const asRoot = process.getuid?.() === 0 ? describe : describe.skip;

asRoot('container launcher on this host (root: setpriv)', () => {
  const fifo = 'launch-test';
  let dir: string;
  let outside: string;
  let launcher: ChildProcess;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ambient-launcher-'));
    // Where the commands (user nobody) may write.
    outside = await mkdtemp(join(tmpdir(), 'ambient-launcher-out-'));
    await chmod(outside, 0o777);
    await promisify(execFile)('mkfifo', ['-m', '600', join(dir, fifo)]);
    await prepareSlots(dir);
    // A process group of its own: the slots it prepares are made by its children, which must end
    // with it before its directory is removed.
    launcher = spawn('/bin/sh', ['-c', LAUNCHER, 'ambient-launcher', dir, fifo, LAUNCHER], {
      stdio: 'ignore',
      detached: true,
    });
    await waitFor(() => launcherListens(join(dir, fifo)), Boolean, {
      intervalMs: 10,
      what: 'the launcher to listen',
    });
  });

  afterAll(async () => {
    if (launcher?.pid !== undefined && launcher.exitCode === null && launcher.signalCode === null) {
      const exited = new Promise((resolve) => launcher.once('exit', resolve));
      process.kill(-launcher.pid, 'SIGKILL');
      await exited;
    }
    forgetSlots(dir);
    // A child of the group may still be finishing its last file as the group dies.
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    await rm(outside, { recursive: true, force: true, maxRetries: 5 });
  });

  function command(script: string): Promise<LaunchedCommand | null> {
    return launch(dir, dir, fifo, {
      wrapper: script,
      args: ['ambient-test'],
      uid: 65534,
      gid: 65534,
    });
  }

  function text(socket: NodeJS.ReadableStream): Promise<string> {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    return new Promise((resolve) =>
      socket.on('close', () => resolve(Buffer.concat(chunks).toString())),
    );
  }

  it('starts a command once the host says so, as the user, with its output and status', async () => {
    const launched = (await command('id -u; exit 3'))!;
    const stdout = text(launched.stdout);
    expect(await launched.acknowledged).toBe(true);
    await launched.proceed();
    expect(await launched.status).toBe(3);
    expect(await stdout).toBe('65534\n');
    await launched.dispose();
  });

  it('runs nothing of a command cancelled after its acknowledgement', async () => {
    const marker = join(outside, 'cancelled');
    const launched = (await command(`touch ${marker}`))!;
    expect(await launched.acknowledged).toBe(true);
    await launched.cancel();
    // The supervisor ends without a status once it read the word.
    expect(await launched.status).toBeNull();
    await launched.dispose();
    await expect(stat(marker)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('lives on after its shell fails (the EXIT trap execs it anew)', async () => {
    // An id without a directory: opening its status FIFO fails, which ends the shell.
    const handle = await open(join(dir, fifo), constants.O_WRONLY | constants.O_NONBLOCK);
    await handle.write('999999\n');
    await handle.close();
    const launched = (await command('echo again'))!;
    const stdout = text(launched.stdout);
    expect(await launched.acknowledged).toBe(true);
    await launched.proceed();
    expect(await launched.status).toBe(0);
    expect(await stdout).toBe('again\n');
    expect(launcher.exitCode).toBeNull();
    await launched.dispose();
  });
});
