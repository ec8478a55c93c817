/**
 * The docker backend's command launcher against the real daemon: commands go through the
 * container's own launcher (no `docker exec`) with exit codes, separate stdout and stderr, kill
 * of a process tree, background children that outlive the command, limit hits, concurrent
 * commands that do not mix; the sandbox user can neither reach the launcher's FIFOs nor signal
 * it; `docker exec` still runs what the launcher does not (stdin, AMBIENT_DOCKER_LAUNCHER=false).
 * The same for the launcher that became the compiled spawner (the default where it is built),
 * which also takes stdin and, as bubblewrap's, ends what a command leaves running.
 */
import Dockerode from 'dockerode';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  DockerSandboxBackend,
  dockerAnswers,
} from '../src/modules/workers/sandbox/backends/docker/docker-sandbox';
import {
  SANDBOX_PATH,
  type Sandbox,
  type SandboxLimits,
} from '../src/modules/workers/sandbox/sandbox.types';
import {
  AGENT_IMAGE,
  BUILD_AGENT_IMAGE,
  collect,
  dockerSandboxSettings,
  finishProcess,
  printed,
  startedBy,
  type FinishedProcess,
} from './support/docker-sandbox';
import { waitFor } from './support/wait';

const ENV = { PATH: SANDBOX_PATH };

const docker = new Dockerode();
/** The launcher as it is by default where the helper is built: the compiled spawner. */
const withSpawner = new DockerSandboxBackend(dockerSandboxSettings(), docker);
// The shell launcher: where the compiled spawner is built, AMBIENT_DOCKER_SPAWNER=false asks for it.
const withLauncher = new DockerSandboxBackend(
  dockerSandboxSettings({ launcher: true, spawner: false }),
  docker,
);
const withoutLauncher = new DockerSandboxBackend(
  dockerSandboxSettings({ launcher: false }),
  docker,
);
const opened: Sandbox[] = [];
let base: string;
let runs = 0;

function sh(sandbox: Sandbox, script: string): Promise<FinishedProcess> {
  return finishProcess(sandbox.spawn('/bin/sh', ['-c', script], { env: ENV }));
}

async function openSandbox(
  backend: DockerSandboxBackend,
  limits: Partial<SandboxLimits> = {},
): Promise<{ sandbox: Sandbox; workspace: string; runId: string }> {
  const runId = `launcher-${process.pid}-${++runs}`;
  const workspace = join(base, runId, 'workspace');
  await mkdir(workspace, { recursive: true });
  const sandbox = await backend.open({
    runId,
    executionId: 1,
    teamId: 'team-test',
    workspaceDir: workspace,
    image: null,
    network: 'none',
    limits: { memoryMb: 256, pids: 128, cpus: 1, ...limits },
    apiUrl: null,
  });
  opened.push(sandbox);
  return { sandbox, workspace, runId };
}

beforeAll(async () => {
  if (!(await dockerAnswers(docker, 3000))) {
    throw new Error('no docker daemon answers: these tests need one (.ci/run starts dockerd)');
  }
  // Cached by tag: a no-op once the image exists.
  await promisify(execFile)(BUILD_AGENT_IMAGE, ['--tag', AGENT_IMAGE], { maxBuffer: 16 << 20 });
  base = await mkdtemp(join(tmpdir(), 'ambient-launcher-'));
}, 600_000);

afterAll(async () => {
  await Promise.all(opened.map((sandbox) => sandbox.close()));
  // Closed sandboxes' containers are removed in the background; this process ends first.
  await Promise.all([withSpawner.drain(), withLauncher.drain(), withoutLauncher.drain()]);
  if (base) await rm(base, { recursive: true, force: true });
});

/**
 * A command runs as the sandbox user in /workspace with its exit code and separate outputs, started
 * by `by`; a process sees exactly the environment it was given, and the working directory asked.
 */
async function expectUserOutputsAndEnvironment(sandbox: Sandbox, by: string): Promise<void> {
  const result = await sh(sandbox, 'id -u; id -G; pwd; echo to-stderr >&2; exit 7');
  expect(result).toMatchObject({
    code: 7,
    signal: null,
    stdout: '1000\n1000\n/workspace\n',
    stderr: 'to-stderr\n',
    startedBy: by,
  });
  const env = await finishProcess(
    sandbox.spawn('env', [], { env: { PATH: SANDBOX_PATH, A: 'it\'s "quoted" $HOME\nx' } }),
  );
  expect(env.stdout).toBe(`PATH=${SANDBOX_PATH}\nA=it's "quoted" $HOME\nx\n`);
  expect(await finishProcess(sandbox.spawn('pwd', [], { env: ENV, cwd: '/tmp' }))).toMatchObject({
    code: 0,
    stdout: '/tmp\n',
    startedBy: by,
  });
}

describe('docker command launcher', () => {
  it('runs commands as the sandbox user with exit codes and separate stdout and stderr', async () => {
    const { sandbox } = await openSandbox(withLauncher);
    // The compiled helper (npm ci builds it; CI has a compiler) is bound in, so the launcher
    // starts commands through its `--as`, not the setsid + setpriv chain.
    const helper = await sh(sandbox, 'test -x /run/ambient-spawner && echo bound');
    expect(helper.stdout).toBe('bound\n');
    await expectUserOutputsAndEnvironment(sandbox, 'launcher');
    const missing = await finishProcess(sandbox.spawn('no-such-cli', [], { env: ENV }));
    expect(missing.startError?.code).toBe('ENOENT');
    const killedBySignal = await sh(sandbox, 'kill -TERM $$');
    expect(killedBySignal).toMatchObject({ code: null, signal: 'SIGTERM' });
    // No capability, not even in the bounding set; no new privileges; nothing of the launcher.
    const status = await sh(
      sandbox,
      'grep -E "^Cap(Eff|Prm|Bnd)|NoNewPrivs|SigIgn" /proc/self/status',
    );
    expect(status.stdout).toMatch(/SigIgn:\s+0{16}\n/);
    expect(status.stdout).toMatch(/CapPrm:\s+0{16}\nCapEff:\s+0{16}\nCapBnd:\s+0{16}/);
    expect(status.stdout).toMatch(/NoNewPrivs:\s+1/);
    // Its descriptors: /dev/null and its two output FIFOs, no status or launcher FIFO.
    const fds = await sh(sandbox, 'for fd in /proc/$$/fd/*; do readlink "$fd"; done');
    expect(fds.stdout).toMatch(/\/dev\/null\n.*\/out\n.*\/err\n/);
    expect(fds.stdout).not.toMatch(/status|launch-|\/kill$/m);
  });

  it('kills the process tree of a command and nothing else', async () => {
    const { sandbox } = await openSandbox(withLauncher);
    const parent = sandbox.spawn('bash', ['-c', 'sleep 1000 & echo $!; sleep 1000 & wait'], {
      env: ENV,
    });
    const child = Number((await printed(parent.stdout, /^\d+\n/)).trim());
    parent.kill();
    expect(await parent.exited).toMatchObject({ code: null, signal: 'SIGKILL' });
    expect(startedBy(parent)).toBe('launcher');
    // The whole group got its SIGKILL with the parent; a child dies, and docker-init reaps it,
    // when it is next scheduled, which on a loaded host can come after the parent's status.
    // A timeout here (with what was left) is the failure.
    await waitFor(
      () => sh(sandbox, `kill -0 ${child} 2>/dev/null; echo $?; ps -e -o comm=`),
      ({ stdout }) => stdout.startsWith('1\n') && !/sleep/.test(stdout),
      { what: "the command's process group to be gone" },
    );
    expect((await sh(sandbox, 'true')).startedBy).toBe('launcher');
  });

  it('ends a command whose background child outlives it; the output comes until the child ends', async () => {
    const { sandbox, workspace } = await openSandbox(withLauncher);
    const child = sandbox.spawn(
      '/bin/sh',
      ['-c', '(while [ ! -e /workspace/go ]; do sleep 0.05; done; echo late) & echo early'],
      { env: ENV },
    );
    const stdout = collect(child.stdout);
    child.stderr.resume();
    // Exited while its child still waits for the file.
    expect(await child.exited).toMatchObject({ code: 0, signal: null });
    await writeFile(join(workspace, 'go'), '');
    expect(await stdout).toBe('early\nlate\n');
  });

  it('says which limit killed a command', async () => {
    const { sandbox } = await openSandbox(withLauncher, { memoryMb: 64 });
    const hog = await finishProcess(
      sandbox.spawn('bash', ['-c', 'x=a; while true; do x=$x$x; done'], { env: ENV }),
    );
    expect(hog).toMatchObject({ code: null, signal: 'SIGKILL', startedBy: 'launcher' });
    expect(await sandbox.limitHit()).toBe("out of memory: the sandbox's memory limit is 64 MiB");

    const { sandbox: small } = await openSandbox(withLauncher, { pids: 24 });
    const bomb = small.spawn('bash', ['-c', 'bomb() { bomb | bomb & }; bomb; sleep 600'], {
      env: ENV,
    });
    bomb.stdout.resume();
    await printed(bomb.stderr, /Resource temporarily unavailable/);
    bomb.kill();
    expect(await bomb.exited).toMatchObject({ code: null, signal: 'SIGKILL' });
    expect(await small.limitHit()).toBe('process limit reached: the sandbox allows 24 processes');
    // Usable afterwards (through the launcher, or `docker exec` should the fork bomb have
    // taken the launcher's last fork).
    expect(await sh(small, 'echo after')).toMatchObject({ code: 0, stdout: 'after\n' });
  });

  it('ends a command sent while a fork bomb fills the process limit, runs it at most once, and keeps the container and its launcher', async () => {
    const { sandbox, workspace, runId } = await openSandbox(withLauncher, { pids: 24 });
    const bomb = sandbox.spawn('bash', ['-c', 'bomb() { bomb | bomb & }; bomb; sleep 600'], {
      env: ENV,
    });
    bomb.stdout.resume();
    await printed(bomb.stderr, /Resource temporarily unavailable/);
    // The launcher cannot fork for it: it goes to `docker exec`, which runs it or says why not.
    const during = await sh(sandbox, 'echo ran >> /workspace/ran; echo during');
    bomb.kill();
    expect(await bomb.exited).toMatchObject({ code: null, signal: 'SIGKILL' });
    if (during.startError) {
      expect(during.startError.code).toBe('EIO');
    } else {
      expect(during).toMatchObject({ code: 0, stdout: 'during\n' });
    }
    const ran = await readFile(join(workspace, 'ran'), 'utf8').catch(() => '');
    expect(ran).toBe(during.startError ? '' : 'ran\n');
    // The container still runs, and so does its launcher (started anew by its own trap).
    expect((await docker.getContainer(`ambient-${runId}-1`).inspect()).State.Running).toBe(true);
    // The launcher's processes (and its supervisors') are the shells whose script is LAUNCHER.
    const after = await sh(
      sandbox,
      'echo after; ps -e -o args= | grep -c "^/bin/sh -c command -v setpriv"',
    );
    expect(after).toMatchObject({ code: 0 });
    const [said, launchers] = after.stdout.split('\n');
    expect(said).toBe('after');
    expect(Number(launchers)).toBeGreaterThanOrEqual(1);
  });

  it("keeps the launcher's FIFOs and processes out of the sandbox user's reach", async () => {
    const { sandbox } = await openSandbox(withLauncher);
    const probe = await sh(
      sandbox,
      [
        'ls /run/ambient-killer 2>&1; echo "ls=$?"',
        'echo x > /run/ambient-killer/launch 2>&1; echo "write=$?"',
        'for pid in $(ps -e -o pid= -o user= | awk \'$2 == "root" { print $1 }\'); do',
        '  kill -0 "$pid" 2>/dev/null && echo "signalled $pid"',
        '  ls "/proc/$pid/fd" >/dev/null 2>&1 && echo "fds of $pid"',
        'done; true',
      ].join('\n'),
    );
    expect(probe.code).toBe(0);
    expect(probe.stdout).toMatch(/Permission denied[^]*ls=2/);
    expect(probe.stdout).toMatch(/write=[12]/);
    expect(probe.stdout).not.toMatch(/signalled|fds of/);
    expect(probe.startedBy).toBe('launcher');
  });

  it('keeps the output of concurrent commands apart', async () => {
    const { sandbox } = await openSandbox(withLauncher);
    const lines = (tag: string): string =>
      `i=0; while [ $i -lt 3000 ]; do echo ${tag}$i; echo ${tag}-err$i >&2; i=$((i+1)); done`;
    const [a, b] = await Promise.all([sh(sandbox, lines('A')), sh(sandbox, lines('B'))]);
    const expected = (tag: string, suffix = ''): string =>
      Array.from({ length: 3000 }, (_, i) => `${tag}${suffix}${i}\n`).join('');
    expect(a.stdout).toBe(expected('A'));
    expect(a.stderr).toBe(expected('A', '-err'));
    expect(b.stdout).toBe(expected('B'));
    expect(b.stderr).toBe(expected('B', '-err'));
    expect([a.startedBy, b.startedBy]).toEqual(['launcher', 'launcher']);
  });

  it('uses docker exec for stdin and when the launcher is switched off', async () => {
    const { sandbox } = await openSandbox(withLauncher);
    const piped = sandbox.spawn('cat', [], { env: ENV, stdin: 'pipe' });
    piped.stdin!.end('through stdin\n');
    expect(await finishProcess(piped)).toMatchObject({
      code: 0,
      stdout: 'through stdin\n',
      startedBy: 'exec',
    });

    const { sandbox: plain } = await openSandbox(withoutLauncher);
    expect(await sh(plain, 'echo plain; exit 3')).toMatchObject({
      code: 3,
      stdout: 'plain\n',
      startedBy: 'exec',
    });
    const ps = await sh(plain, 'ps -e -o user= | sort | uniq -c');
    // docker-init and the killer: no launcher.
    expect(ps.stdout).toMatch(/^\s*2 root$/m);
  });
});

describe('docker command launcher as the compiled spawner', () => {
  /** The container's processes as `pid user args`, seen from inside. */
  const processes = async (sandbox: Sandbox): Promise<string> =>
    (await sh(sandbox, 'ps -e -o pid= -o user= -o args=')).stdout;

  it('runs commands as the sandbox user, with no capability, exit codes, separate outputs and stdin', async () => {
    const { sandbox, workspace } = await openSandbox(withSpawner);
    await expectUserOutputsAndEnvironment(sandbox, 'spawner');
    const missing = await finishProcess(sandbox.spawn('no-such-cli', [], { env: ENV }));
    expect(missing.startError?.message).toMatch(/ENOENT \(no-such-cli not found in the sandbox\)/);
    const noDir = await finishProcess(sandbox.spawn('pwd', [], { env: ENV, cwd: '/nowhere' }));
    expect(noDir.startError?.message).toMatch(/working directory \/nowhere not found/);
    expect(await sh(sandbox, 'kill -TERM $$')).toMatchObject({ code: null, signal: 'SIGTERM' });
    const status = await sh(
      sandbox,
      'grep -E "^(Cap(Eff|Prm|Bnd)|NoNewPrivs|SigIgn)" /proc/self/status',
    );
    expect(status.stdout).toMatch(/CapPrm:\s+0{16}\nCapEff:\s+0{16}\nCapBnd:\s+0{16}/);
    expect(status.stdout).toMatch(/NoNewPrivs:\s+1/);
    // No signal ignored (the launcher, a background job of a shell, had SIGINT and SIGQUIT so).
    expect(status.stdout).toMatch(/SigIgn:\s+0{16}\n/);
    // A program without a `#!` line runs as a /bin/sh script, as execvp runs it.
    await writeFile(join(workspace, 'plain'), 'echo "plain script $1"\n', { mode: 0o755 });
    expect(
      await finishProcess(sandbox.spawn('./plain', ['ran'], { env: ENV, cwd: '/workspace' })),
    ).toMatchObject({ code: 0, stdout: 'plain script ran\n' });
    // Its descriptors: its stdin and two output pipes, nothing of the spawner's FIFOs.
    const fds = await sh(sandbox, 'for fd in /proc/$$/fd/*; do readlink "$fd"; done');
    expect(fds.stdout).not.toMatch(/launch-|\/kill$|events/m);
    const piped = sandbox.spawn('cat', [], { env: ENV, stdin: 'pipe' });
    piped.stdin!.end('through stdin\n');
    expect(await finishProcess(piped)).toMatchObject({
      code: 0,
      stdout: 'through stdin\n',
      startedBy: 'spawner',
    });
  });

  it('kills the process tree of a command and nothing else, and ends what a command leaves running', async () => {
    const { sandbox } = await openSandbox(withSpawner);
    const other = sandbox.spawn('sleep', ['1000'], { env: ENV });
    const parent = sandbox.spawn('bash', ['-c', 'setsid sleep 1001 & echo $!; sleep 1002 & wait'], {
      env: ENV,
    });
    await printed(parent.stdout, /^\d+\n/);
    parent.kill();
    expect(await parent.exited).toMatchObject({ code: null, signal: 'SIGKILL' });
    // Even the child that left its session goes: the supervisor's orphans are the spawner's.
    await waitFor(
      () => processes(sandbox),
      (list) => !/sleep 100[12]/.test(list) && /sleep 1000/.test(list),
      { what: "the killed command's processes to end, and only those" },
    );
    other.kill();
    expect(await other.exited).toMatchObject({ signal: 'SIGKILL' });

    const left = await sh(sandbox, 'sleep 1003 >/dev/null 2>&1 & echo started');
    expect(left).toMatchObject({ code: 0, stdout: 'started\n' });
    await waitFor(
      () => processes(sandbox),
      (list) => !/sleep 1003/.test(list),
      { what: 'what the command left running to end with it' },
    );
  });

  it('runs a command sent while the process limit is full at most once, and keeps its spawner', async () => {
    const { sandbox, workspace } = await openSandbox(withSpawner, { pids: 24 });
    const before = await processes(sandbox);
    const spawner = /^\s*(\d+) root\s+\/run\/ambient-spawner --sandbox/m.exec(before)?.[1];
    expect(spawner).toBeDefined();
    // Processes that stay, and a loop that keeps asking for more: the limit stays full. (A fork
    // bomb's processes come and go, and a loaded host gave the spawner a free slot between them.)
    const bomb = sandbox.spawn('bash', ['-c', 'while :; do sleep 600 & done'], { env: ENV });
    bomb.stdout.resume();
    await printed(bomb.stderr, /Resource temporarily unavailable/);
    // The spawner cannot fork for it: it goes to `docker exec`, which runs it once the filler is
    // gone (or says why not).
    const sent = sandbox.spawn('sh', ['-c', 'echo ran >> /workspace/ran; echo during'], {
      env: ENV,
    });
    const finished = finishProcess(sent);
    await waitFor(
      async () => startedBy(sent),
      (by) => by === 'exec',
      { intervalMs: 5, what: 'the command to go to docker exec' },
    );
    bomb.kill();
    expect(await bomb.exited).toMatchObject({ code: null, signal: 'SIGKILL' });
    const during = await finished;
    if (during.startError) expect(during.startError.code).toBe('EIO');
    else expect(during).toMatchObject({ code: 0, stdout: 'during\n' });
    const ran = await readFile(join(workspace, 'ran'), 'utf8').catch(() => '');
    expect(ran).toBe(during.startError ? '' : 'ran\n');
    expect(await sandbox.limitHit()).toBe('process limit reached: the sandbox allows 24 processes');
    // The same spawner still starts commands.
    const after = await sh(
      sandbox,
      'ps -e -o pid= -o args= | grep -c "^ *' + spawner + ' /run/ambient-spawner"',
    );
    expect(after).toMatchObject({ code: 0, stdout: '1\n', startedBy: 'spawner' });
  });

  it("keeps the spawner, its supervisors and its FIFOs out of the sandbox user's reach", async () => {
    const { sandbox } = await openSandbox(withSpawner);
    const busy = sandbox.spawn('sleep', ['1000'], { env: ENV });
    const probe = await sh(
      sandbox,
      [
        'ls /run/ambient-killer 2>&1; echo "ls=$?"',
        'for pid in $(ps -e -o pid= -o user= | awk \'$2 == "root" { print $1 }\'); do',
        '  kill -0 "$pid" 2>/dev/null && echo "signalled $pid"',
        '  ls "/proc/$pid/fd" >/dev/null 2>&1 && echo "fds of $pid"',
        'done',
        'ps -e -o user= -o args= | grep -c "^root *\\/run\\/ambient-spawner --sandbox"',
      ].join('\n'),
    );
    busy.kill();
    expect(probe.code).toBe(0);
    expect(probe.stdout).toMatch(/Permission denied[^]*ls=2/);
    expect(probe.stdout).not.toMatch(/signalled|fds of/);
    // The spawner and the supervisors of `sleep` and of the probe itself: root, every one.
    expect(probe.stdout).toMatch(/\n3\n$/);
    expect(probe.startedBy).toBe('spawner');
  });
});
