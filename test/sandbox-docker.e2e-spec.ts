/**
 * The docker sandbox backend against the real daemon (CI starts one and builds the image):
 * isolation, limits, kill, close and sweep. Always network `none`.
 */
import Dockerode from 'dockerode';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SANDBOXES_CPU_WEIGHT } from '../src/modules/workers/sandbox/cgroup-limits';
import { apiError } from '../src/modules/workers/sandbox/backends/docker/docker-errors';
import { settledWithin, waitFor } from './support/wait';
import {
  DockerSandboxBackend,
  dockerAnswers,
} from '../src/modules/workers/sandbox/backends/docker/docker-sandbox';
import {
  SANDBOX_LABELS,
  SANDBOX_PATH,
  SandboxError,
  type Sandbox,
  type SandboxExit,
  type SandboxLimits,
  type SandboxProcess,
  type SandboxSpawnOptions,
} from '../src/modules/workers/sandbox/sandbox.types';
import {
  AGENT_IMAGE,
  BUILD_AGENT_IMAGE,
  dockerSandboxSettings,
  printed,
} from './support/docker-sandbox';

const ENV = { PATH: SANDBOX_PATH };

const docker = new Dockerode();
const settings = dockerSandboxSettings();
const backend = new DockerSandboxBackend(settings, docker);
/** The shell launcher's (AMBIENT_DOCKER_SPAWNER=false), for what only it does. */
const shellLauncher = new DockerSandboxBackend(dockerSandboxSettings({ spawner: false }), docker);
/** Every backend of the file: drained at the end, so that their closed containers are removed. */
const backends = [backend, shellLauncher];
const opened: Sandbox[] = [];
let base: string;
let runs = 0;

interface Finished extends SandboxExit {
  stdout: string;
  stderr: string;
}

/** Collects a process's output until it has exited. */
async function finish(child: SandboxProcess): Promise<Finished> {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  const exit = await child.exited;
  return {
    ...exit,
    stdout: Buffer.concat(stdout).toString('utf8'),
    stderr: Buffer.concat(stderr).toString('utf8'),
  };
}

function run(
  sandbox: Sandbox,
  file: string,
  args: string[],
  options: Partial<SandboxSpawnOptions> = {},
): Promise<Finished> {
  return finish(sandbox.spawn(file, args, { env: ENV, ...options }));
}

async function openSandbox(
  limits: Partial<SandboxLimits> = {},
  overrides: {
    runId?: string;
    image?: string | null;
    apiUrl?: string;
    backend?: DockerSandboxBackend;
  } = {},
): Promise<{ sandbox: Sandbox; workspace: string; runId: string }> {
  const runId = overrides.runId ?? `test-${process.pid}-${++runs}`;
  const workspace = join(base, runId, 'workspace');
  await mkdir(workspace, { recursive: true });
  // Not a literal: stays valid while SandboxSpec gains fields (apiUrl) the backend ignores.
  const spec = {
    runId,
    executionId: 1,
    teamId: 'team-test',
    workspaceDir: workspace,
    image: overrides.image ?? null,
    network: 'none' as const,
    limits: { memoryMb: 256, pids: 128, cpus: 1, ...limits },
    apiUrl: overrides.apiUrl ?? null,
  };
  const sandbox = await (overrides.backend ?? backend).open(spec);
  opened.push(sandbox);
  return { sandbox, workspace, runId };
}

/** Resolves once the sandbox's container runs (open() does not wait for it). */
async function started(sandbox: Sandbox): Promise<void> {
  expect(await run(sandbox, 'true', [])).toMatchObject({ code: 0 });
}

/** The containers (any state) of a run, by label. */
async function containersOfRun(runId: string): Promise<Dockerode.ContainerInfo[]> {
  return docker.listContainers({
    all: true,
    filters: { label: [`${SANDBOX_LABELS.run}=${runId}`] },
  });
}

function containerOf(runId: string): Dockerode.Container {
  return docker.getContainer(`ambient-${runId}-1`);
}

/** The daemon's events of a container since `since` (seconds), in order: their actions. */
async function containerActions(id: string, since: number): Promise<string[]> {
  const stream = await docker.getEvents({
    since,
    until: Math.ceil(Date.now() / 1000),
    filters: JSON.stringify({ container: [id] }),
  });
  let text = '';
  for await (const chunk of stream as AsyncIterable<Buffer>) text += chunk.toString('utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { Action: string }).Action);
}

/**
 * The host pid of a container's launcher: the shell whose $0 is `ambient-launcher`, or the
 * compiled spawner it became.
 */
async function launcherPid(container: Dockerode.Container): Promise<number> {
  const top = (await container.top()) as { Titles: string[]; Processes: string[][] };
  const column = top.Titles.indexOf('PID');
  for (const row of top.Processes) {
    const pid = Number(row[column]);
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (argv[3] === 'ambient-launcher' || argv.slice(0, 3).join(' ') === LAUNCH_HELPER_SANDBOX) {
      return pid;
    }
  }
  throw new Error('the container has no launcher');
}

const LAUNCH_HELPER_SANDBOX = '/run/ambient-spawner --sandbox --as';

/**
 * The commands running in the container; none once it has stopped (the removal of a closed
 * sandbox's container begins by killing its init, which may come before a look).
 */
async function commandsIn(container: Dockerode.Container): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      const top = (await container.top({ ps_args: '-o pid,comm' })) as { Processes?: string[][] };
      return (top.Processes ?? []).map((row) => row[row.length - 1]);
    } catch (error) {
      const status = apiError(error).statusCode;
      if (status === 409) return [];
      // A container whose init is exiting (its removal began) can get a 500 ("ttrpc: closed")
      // before the daemon knows it stopped: asked again, it answers 409 (seen on a loaded CI).
      if (status !== 500 || attempt === 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

beforeAll(async () => {
  if (!(await dockerAnswers(docker, 3000))) {
    throw new Error(
      'no docker daemon answers: these tests need one (.ci/run starts dockerd; or run ' +
        '`dockerd --bridge=none --iptables=false --ip6tables=false &`)',
    );
  }
  // Cached by tag: a no-op once the image exists.
  await promisify(execFile)(BUILD_AGENT_IMAGE, ['--tag', AGENT_IMAGE], { maxBuffer: 16 << 20 });
  base = await mkdtemp(join(tmpdir(), 'ambient-docker-'));
}, 600_000);

// A spy a failed case left behind must not hold up the next cases.
afterEach(() => jest.restoreAllMocks());

afterAll(async () => {
  await Promise.all(opened.map((sandbox) => sandbox.close()));
  await Promise.all(backends.map((each) => each.drain()));
  if (base) await rm(base, { recursive: true, force: true });
});

describe('docker sandbox', () => {
  it('runs commands as a non-root user in /workspace, sharing files with the host', async () => {
    const { sandbox, workspace } = await openSandbox();
    const first = await run(sandbox, 'true', []);
    expect(first).toMatchObject({ code: 0, signal: null });

    await writeFile(join(workspace, 'from-host.txt'), 'written by the host\n');
    await sandbox.adopt(join(workspace, 'from-host.txt'));
    const result = await run(sandbox, 'bash', [
      '-c',
      'id -u; id -g; pwd; cat from-host.txt; echo appended >> from-host.txt; echo made > made.txt',
    ]);
    expect(result).toMatchObject({ code: 0, signal: null, stderr: '' });
    expect(result.stdout.split('\n')).toEqual([
      '1000',
      '1000',
      '/workspace',
      'written by the host',
      '',
    ]);
    expect(await readFile(join(workspace, 'made.txt'), 'utf8')).toBe('made\n');
    expect(await readFile(join(workspace, 'from-host.txt'), 'utf8')).toBe(
      'written by the host\nappended\n',
    );
    expect((await stat(join(workspace, 'made.txt'))).uid).toBe(1000);

    expect(sandbox.backend).toBe('docker');
    expect(sandbox.workdir).toBe('/workspace');
    expect(sandbox.privateDir.inside).toBe('/run/ambient');
    await writeFile(join(sandbox.privateDir.host, 'config.json'), '{"private":true}');
    await sandbox.adopt(join(sandbox.privateDir.host, 'config.json'));
    const privateRead = await run(sandbox, 'cat', ['/run/ambient/config.json']);
    expect(privateRead).toMatchObject({ code: 0, stdout: '{"private":true}' });
    const privateWrite = await run(sandbox, 'sh', ['-c', 'echo x > /run/ambient/mine']);
    expect(privateWrite.code).not.toBe(0);

    const sub = await run(sandbox, 'pwd', [], { cwd: '/tmp' });
    expect(sub).toMatchObject({ code: 0, stdout: '/tmp\n' });
    expect(await run(sandbox, 'sh', ['-c', 'exit 3'])).toMatchObject({ code: 3, signal: null });
    const piped = sandbox.spawn('cat', [], { env: ENV, stdin: 'pipe' });
    piped.stdin!.end('through stdin\n');
    expect(await finish(piped)).toMatchObject({ code: 0, stdout: 'through stdin\n' });
  });

  it("puts back what a worker that died moving the workspace out of a container left beside it, before the run's next sandbox opens", async () => {
    const runId = `test-${process.pid}-returning`;
    const workspace = join(base, runId, 'workspace');
    // moveWorkspaceOut gathers a run's entries in <workspace>.returning before the rename back.
    await mkdir(join(`${workspace}.returning`, 'src'), { recursive: true });
    await writeFile(join(`${workspace}.returning`, 'src', 'moved.txt'), 'moved halfway\n');
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, 'stayed.txt'), 'stayed\n');
    const { sandbox } = await openSandbox({}, { runId });
    const read = await run(sandbox, 'sh', ['-c', 'cat src/moved.txt stayed.txt']);
    expect(read).toMatchObject({ code: 0, stdout: 'moved halfway\nstayed\n' });
    expect(existsSync(`${workspace}.returning`)).toBe(false);
  });

  it('sees no host process, no network and no capability', async () => {
    const { sandbox } = await openSandbox();
    const ps = await run(sandbox, 'ps', ['-e', '-o', 'pid=,user=,args=']);
    expect(ps.code).toBe(0);
    const processes = ps.stdout.trim().split('\n');
    // docker-init, the killer and the launcher (root), the launcher's supervisor of ps (root:
    // it waits for ps to report its status) and ps itself, the only process of the sandbox user.
    expect(processes).toHaveLength(5);
    const users = processes.map((line) => line.trim().split(/\s+/)[1]);
    expect(users.filter((user) => user !== 'root')).toEqual(['agent']);
    expect(ps.stdout).not.toMatch(/dockerd|node|mariadb|redis/);

    const tcp = await run(sandbox, 'bash', ['-c', 'echo > /dev/tcp/127.0.0.1/3306']);
    expect(tcp.code).not.toBe(0);
    const interfaces = await run(sandbox, 'ls', ['/sys/class/net']);
    expect(interfaces).toMatchObject({ code: 0, stdout: 'lo\n' });
    // A network namespace of its own, not the host's, with loopback up and `localhost` resolving.
    const netns = await run(sandbox, 'readlink', ['/proc/self/ns/net']);
    expect(netns.stdout).toMatch(/^net:\[\d+\]\n$/);
    expect(netns.stdout).not.toBe(`${await readlink('/proc/self/ns/net')}\n`);
    expect(await run(sandbox, 'cat', ['/sys/class/net/lo/flags'])).toMatchObject({
      code: 0,
      stdout: '0x9\n',
    });
    const localhost = await run(sandbox, 'getent', ['hosts', 'localhost']);
    expect(localhost.stdout).toMatch(/^(127\.0\.0\.1|::1)\s+localhost/);
    const hostsWrite = await run(sandbox, 'sh', ['-c', 'echo 10.0.0.1 evil >> /etc/hosts']);
    expect(hostsWrite.code).not.toBe(0);

    const caps = await run(sandbox, 'grep', ['^Cap', '/proc/self/status']);
    expect(caps.stdout).toMatch(/CapEff:\s+0000000000000000/);
    expect(caps.stdout).toMatch(/CapPrm:\s+0000000000000000/);
    const noNewPrivs = await run(sandbox, 'grep', ['NoNewPrivs', '/proc/self/status']);
    expect(noNewPrivs.stdout).toMatch(/NoNewPrivs:\s+1/);
  });

  it("runs in the sandboxes' cgroup, weighted an eighth of the service's, where docker's cgroups are its own", async () => {
    const { sandbox, runId } = await openSandbox();
    await started(sandbox);
    const { State } = await containerOf(runId).inspect();
    const groups = (await readFile(`/proc/${State.Pid}/cgroup`, 'utf8')).split('\n');
    // v1: the cpu hierarchy's line (`n:cpu:/…` or `n:cpu,cpuacct:/…`); v2: the only one.
    const cpuGroup = groups.find((line) => /^\d+:([^:]*,)?cpu(,[^:]*)?:/.test(line)) ?? groups[0];
    const { CgroupDriver } = (await docker.info()) as { CgroupDriver: string };
    if (CgroupDriver !== 'cgroupfs' || process.getuid?.() !== 0) {
      expect(cpuGroup).not.toMatch(/:\/ambient\//);
      return;
    }
    expect(cpuGroup).toMatch(/:\/ambient\/[0-9a-f]{64}$/);
    const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
    const weight = v2
      ? '/sys/fs/cgroup/ambient/cpu.weight'
      : '/sys/fs/cgroup/cpu/ambient/cpu.shares';
    expect((await readFile(weight, 'utf8')).trim()).toBe(
      String(v2 ? SANDBOXES_CPU_WEIGHT.v2Weight : SANDBOXES_CPU_WEIGHT.v1Shares),
    );
  });

  it('gives a process only the environment it was given', async () => {
    const { sandbox } = await openSandbox();
    const result = await run(sandbox, 'env', [], {
      env: { PATH: SANDBOX_PATH, FOO: 'bar baz', MULTI: 'a\nb' },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`PATH=${SANDBOX_PATH}\nFOO=bar baz\nMULTI=a\nb\n`);
  });

  it('reports programs and working directories that do not exist as ENOENT', async () => {
    const { sandbox } = await openSandbox();
    const missing = await run(sandbox, 'no-such-cli', ['--version']);
    expect(missing).toMatchObject({ code: null, signal: null, stdout: '', stderr: '' });
    expect(missing.startError?.code).toBe('ENOENT');
    const missingPath = await run(sandbox, '/opt/nothing/bin/cli', []);
    expect(missingPath.startError?.code).toBe('ENOENT');
    const missingCwd = await run(sandbox, 'true', [], { cwd: '/workspace/absent' });
    expect(missingCwd.startError?.code).toBe('ENOENT');
    // Found on the PATH the process is given, not on another.
    const withoutPath = await run(sandbox, 'rg', ['--version'], { env: { PATH: '/nowhere' } });
    expect(withoutPath.startError?.code).toBe('ENOENT');
  });

  it('kills a memory hog at the memory limit and says so', async () => {
    const { sandbox } = await openSandbox({ memoryMb: 64 });
    expect(await sandbox.limitHit()).toBeNull();
    const hog = await run(sandbox, 'bash', ['-c', 'x=a; while true; do x=$x$x; done']);
    expect(hog).toMatchObject({ code: null, signal: 'SIGKILL' });
    expect(await sandbox.limitHit()).toBe("out of memory: the sandbox's memory limit is 64 MiB");
    expect(await sandbox.limitHit()).toBeNull();
    expect(await run(sandbox, 'echo', ['still', 'usable'])).toMatchObject({
      code: 0,
      stdout: 'still usable\n',
    });
  });

  it('contains a fork bomb at the process limit, kills it and stays usable', async () => {
    const { sandbox } = await openSandbox({ pids: 32 });
    const bomb = sandbox.spawn('bash', ['-c', 'bomb() { bomb | bomb & }; bomb; sleep 600'], {
      env: ENV,
    });
    bomb.stdout.resume();
    await printed(bomb.stderr, /Resource temporarily unavailable/);
    bomb.kill();
    // Killed although every pid is taken (the killer needs no new process); how fast is the
    // benches' business, so the bound is only there to fail with a clear message.
    expect(await settledWithin(bomb.exited, 'the bomb to be killed', 60_000)).toMatchObject({
      code: null,
      signal: 'SIGKILL',
    });
    expect(await run(sandbox, 'echo', ['after'])).toMatchObject({ code: 0, stdout: 'after\n' });
    expect(await sandbox.limitHit()).toBe('process limit reached: the sandbox allows 32 processes');
    await waitFor(
      () => run(sandbox, 'ps', ['-e', '-o', 'comm=']),
      ({ stdout }) => !/bash|sleep/.test(stdout),
      { what: "the bomb's processes to be gone" },
    );
  });

  it('kill() kills the process and everything it started, not the container', async () => {
    const { sandbox } = await openSandbox();
    const parent = sandbox.spawn('bash', ['-c', 'sleep 1000 & echo $!; sleep 1000 & wait'], {
      env: ENV,
    });
    const child = Number((await printed(parent.stdout, /^\d+\n/)).trim());
    parent.kill();
    parent.kill();
    expect(await parent.exited).toMatchObject({ code: null, signal: 'SIGKILL' });
    // The group got its SIGKILL with the parent; a child dies (and is reaped) when next scheduled,
    // which on a loaded host can come after the parent's status. A timeout here is the failure.
    await waitFor(
      () => run(sandbox, 'sh', ['-c', `kill -0 ${child} 2>/dev/null; echo $?; ps -e -o comm=`]),
      ({ stdout }) => stdout.startsWith('1\n') && !/sleep/.test(stdout),
      { what: "the command's process group to be gone" },
    );
    // Killing a process that already ended does nothing.
    const ended = sandbox.spawn('true', [], { env: ENV });
    await ended.exited;
    ended.kill();
    expect((await run(sandbox, 'true', [])).code).toBe(0);
  });

  it('close() kills every process at once, then removes the container and the private directory', async () => {
    const { sandbox, runId } = await openSandbox();
    await started(sandbox);
    const running = sandbox.spawn('sleep', ['1000'], { env: ENV });
    // Left behind by a command that ended: not one the sandbox knows of.
    expect(
      await run(sandbox, '/bin/sh', ['-c', 'setsid sleep 2000 >/dev/null 2>&1 &']),
    ).toMatchObject({ code: 0 });
    // The removal (in the background) waits until the processes were seen gone.
    let removalAsked: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => (removalAsked = resolve));
    let letRemove: () => void = () => undefined;
    const mayRemove = new Promise<void>((resolve) => (letRemove = resolve));
    const remove = Dockerode.Container.prototype.remove;
    const held = jest
      .spyOn(Dockerode.Container.prototype, 'remove')
      .mockImplementation(async function (this: Dockerode.Container, ...args: unknown[]) {
        removalAsked();
        await mayRemove;
        return (remove as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      });
    try {
      await settledWithin(sandbox.close(), 'the close');
      expect((await settledWithin(running.exited, 'the sleep to end')).code).toBeNull();
      const container = containerOf(runId);
      await waitFor(
        () => commandsIn(container),
        (commands) => !commands.includes('sleep'),
        { intervalMs: 20, what: "the sandbox's processes to be killed" },
      );
      await sandbox.close();
      // Drained now, not at the end: this file's sandboxes stay open until it ends, a burst to
      // the removal queue, which would hold the removal for up to 10 s (see BurstGate).
      const removed = backend.drain();
      await settledWithin(asked, 'the removal to be asked for');
      letRemove();
      await settledWithin(removed, 'the removal');
      await expect(container.inspect()).rejects.toMatchObject({ statusCode: 404 });
      expect(existsSync(sandbox.privateDir.host)).toBe(false);
    } finally {
      letRemove();
      held.mockRestore();
    }
  });

  it("close() ends the container by killing its init: the daemon removes it and never kills it itself (no runtime's kill)", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const { sandbox, runId } = await openSandbox();
    await started(sandbox);
    const { Id } = await containerOf(runId).inspect();
    await settledWithin(sandbox.close(), 'the close');
    await settledWithin(backend.drain(), 'the removal');
    const actions = await containerActions(Id, since);
    expect(actions).toEqual(expect.arrayContaining(['die', 'destroy']));
    // The daemon's `kill` event: its runtime killing the container, as `rm -f` of a running one does.
    expect(actions).not.toContain('kill');
  });

  it('close() ends a command still waiting for the launcher: it never runs by `docker exec` after', async () => {
    const { sandbox, runId } = await openSandbox({}, { backend: shellLauncher });
    await started(sandbox);
    // The launcher, stopped: alive, its FIFO open, but it acknowledges nothing.
    const launcher = await launcherPid(containerOf(runId));
    process.kill(launcher, 'SIGSTOP');
    const waiting = sandbox.spawn('sleep', ['1000'], { env: ENV });
    waiting.stdout.resume();
    waiting.stderr.resume();
    // Closed once the command is with the launcher (its directory has its supervisor's script).
    const killerDir = `${sandbox.privateDir.host}.killer`;
    await waitFor(
      async () =>
        (await readdir(killerDir)).filter((name) => existsSync(join(killerDir, name, 'run'))),
      (handed) => handed.length > 0,
      { intervalMs: 10, what: 'the command to be handed to the launcher' },
    );
    await settledWithin(sandbox.close(), 'the close');
    expect(await settledWithin(waiting.exited, 'the waiting command to end')).toEqual({
      code: null,
      signal: 'SIGKILL',
    });
    expect((waiting as unknown as { startedBy: string | null }).startedBy).toBeNull();
  });

  it('close() ends a command the stopped spawner never started: it never runs by `docker exec` after', async () => {
    const { sandbox, runId } = await openSandbox();
    await started(sandbox);
    const spawner = await launcherPid(containerOf(runId));
    process.kill(spawner, 'SIGSTOP');
    const waiting = sandbox.spawn('sh', ['-c', 'echo ran > /workspace/ran; exec sleep 1000'], {
      env: ENV,
    });
    waiting.stdout.resume();
    waiting.stderr.resume();
    const startedBy = (): string | null =>
      (waiting as unknown as { startedBy: string | null }).startedBy;
    // The request waits in the spawner's FIFO; the sandbox closes meanwhile.
    await waitFor(
      async () => startedBy(),
      (by) => by === 'spawner',
      {
        intervalMs: 5,
        what: 'the request to be sent to the spawner',
      },
    );
    await settledWithin(sandbox.close(), 'the close');
    expect(await settledWithin(waiting.exited, 'the waiting command to end')).toMatchObject({
      code: null,
      signal: 'SIGKILL',
    });
    expect(startedBy()).toBe('spawner');
    expect(existsSync(join(base, runId, 'workspace', 'ran'))).toBe(false);
  });

  it('replaces a container a crashed process left under the same name', async () => {
    const runId = `test-${process.pid}-reopen`;
    const first = await openSandbox({}, { runId });
    await started(first.sandbox);
    const firstId = (await containerOf(runId).inspect()).Id;
    const second = await openSandbox({}, { runId });
    await started(second.sandbox);
    expect((await containerOf(runId).inspect()).Id).not.toBe(firstId);
    expect(await run(first.sandbox, 'true', [])).toMatchObject({ startError: { code: 'EIO' } });
  });

  it('has the killer kill everything but itself on `all` naming its own container only', async () => {
    const { sandbox, runId } = await openSandbox();
    await started(sandbox);
    const container = containerOf(runId);
    const sleeping = sandbox.spawn('sleep', ['1000'], { env: ENV });
    const commands = () => commandsIn(container);
    await waitFor(commands, (running) => running.includes('sleep'), { what: 'the sleep' });
    const killer = join(`${sandbox.privateDir.host}.killer`, 'kill');
    // Another container's close (one replaced on the same directories) kills nothing here.
    await writeFile(killer, 'all 0123456789ab\n');
    expect(await run(sandbox, 'true', [])).toMatchObject({ code: 0 });
    expect(await commands()).toContain('sleep');

    const { Id } = await container.inspect();
    await writeFile(killer, `all ${Id.slice(0, 12)}\n`);
    expect((await sleeping.exited).code).toBeNull();
    // Left: docker-init and the killer's shell; the launcher is gone with the rest (once
    // docker-init has reaped them all).
    await waitFor(commands, (running) => running.length === 2, {
      what: 'every process but docker-init and the killer to be killed',
    });
    expect((await commands()).sort()).toEqual(['docker-init', 'sh']);
  });

  it('opens at once and starts the container in the background', async () => {
    const spied = new Dockerode();
    const events: string[] = [];
    let created: () => void = () => undefined;
    const nextCreate = (): Promise<void> =>
      new Promise<void>((resolveCreate) => (created = resolveCreate));
    const create = spied.createContainer.bind(spied);
    jest.spyOn(spied, 'createContainer').mockImplementation((options) => {
      events.push('create');
      created();
      return create(options);
    });
    const spiedBackend = new DockerSandboxBackend(settings, spied);
    backends.push(spiedBackend);
    const api = createServer((_request, response) => response.end('pong from the API'));
    await new Promise<void>((resolveListen) => api.listen(0, '127.0.0.1', resolveListen));
    try {
      const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/api/v1`;
      const { sandbox, runId } = await openSandbox({}, { backend: spiedBackend, apiUrl });
      events.push('opened');
      // Known before the container exists: Ambient runs as root with a local daemon here.
      expect(sandbox.apiUrl).toBe('http://127.0.0.1:7171/api/v1');
      // A command spawned at once waits for the container and the API bridge.
      const request =
        'exec 3<>/dev/tcp/127.0.0.1/7171; printf "GET /api/v1/ping HTTP/1.0\r\n\r\n" >&3; cat <&3';
      const result = await run(sandbox, 'bash', ['-c', request]);
      expect(result).toMatchObject({ code: 0, signal: null });
      expect(result.stdout).toContain('pong from the API');
      expect(events).toEqual(['opened', 'create']);
      expect(await containersOfRun(runId)).toHaveLength(1);

      // Closed at once: no container is made, or the one being made is removed.
      const closedAtOnce = await openSandbox({}, { backend: spiedBackend });
      await closedAtOnce.sandbox.close();
      expect(await containersOfRun(closedAtOnce.runId)).toEqual([]);
      const early = closedAtOnce.sandbox.spawn('true', [], { env: ENV });
      expect((await early.exited).startError?.message).toMatch(/closed/);

      events.length = 0;
      const creating = nextCreate();
      const closedWhileCreating = await openSandbox({}, { backend: spiedBackend });
      await creating;
      const pending = closedWhileCreating.sandbox.spawn('sleep', ['100'], { env: ENV });
      await closedWhileCreating.sandbox.close();
      expect(events).toEqual(['create']);
      expect((await pending.exited).code).toBeNull();
      expect(await containersOfRun(closedWhileCreating.runId)).toEqual([]);
      expect(existsSync(closedWhileCreating.sandbox.privateDir.host)).toBe(false);
    } finally {
      await new Promise((resolveClose) => api.close(resolveClose));
    }
  });

  it('gives processes a startError saying why the container could not be started', async () => {
    const badRuntime = new DockerSandboxBackend(
      { ...settings, docker: { ...settings.docker, runtime: 'no-such-runtime' } },
      docker,
    );
    backends.push(badRuntime);
    const { sandbox, runId } = await openSandbox({}, { backend: badRuntime });
    const result = await run(sandbox, 'true', []);
    expect(result).toMatchObject({ code: null, signal: null, startError: { code: 'EIO' } });
    expect(result.startError?.message).toMatch(
      /the sandbox's container \(image "ambient-agent:bookworm"\) could not be started: .*no-such-runtime/,
    );
    expect(await sandbox.limitHit()).toBeNull();
    await sandbox.close();
    await badRuntime.drain();
    expect(await containersOfRun(runId)).toEqual([]);

    // An image without /bin/sh: the container starts and exits at once.
    const empty = await docker.importImage(Readable.from([Buffer.alloc(1024)]), {
      repo: 'ambient-test/empty',
      tag: 'sandbox',
    });
    await new Promise((resolveImport, rejectImport) => {
      empty.on('error', rejectImport);
      empty.on('end', resolveImport);
      empty.resume();
    });
    try {
      const shell = await openSandbox({}, { image: 'ambient-test/empty:sandbox' });
      const noShell = await run(shell.sandbox, 'true', []);
      // Whichever sees it first — the start-up check, an exec refused by the stopped container, or
      // an exec whose shell is missing — the process says the image lacks /bin/sh.
      expect(['EIO', 'ENOENT']).toContain(noShell.startError?.code);
      expect(noShell.startError?.message).toMatch(/\/bin\/sh/);
      await shell.sandbox.close();
      // Removed in the background when it had started at all (and exited at once).
      await backend.drain();
      expect(await containersOfRun(shell.runId)).toEqual([]);
    } finally {
      await docker
        .getImage('ambient-test/empty:sandbox')
        .remove({ force: true })
        .catch(() => undefined);
    }
  });

  it('fails with a generic error for an image that cannot be pulled (the detail is logged)', async () => {
    const image = 'ambient-test/does-not-exist:never';
    const error = await openSandbox({}, { image }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SandboxError);
    expect(error).toMatchObject({ code: 'environment_setup_failed' });
    expect((error as Error).message).toBe(`the image "${image}" could not be pulled`);
  });

  it('labels its containers, and sweep() removes those of executions no longer live', async () => {
    const live = await openSandbox();
    const dead = await openSandbox();
    await Promise.all([started(live.sandbox), started(dead.sandbox)]);
    const info = await containerOf(dead.runId).inspect();
    expect(info.Config.Labels).toMatchObject({
      [SANDBOX_LABELS.managed]: '1',
      [SANDBOX_LABELS.run]: dead.runId,
      [SANDBOX_LABELS.execution]: '1',
      [SANDBOX_LABELS.team]: 'team-test',
    });
    expect(info.HostConfig).toMatchObject({
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Memory: 256 * 1024 * 1024,
      MemorySwap: 256 * 1024 * 1024,
      NanoCpus: 1e9,
    });
    // Only the dead one is not live: other sandboxes (other test files) stay.
    const removed = await backend.sweep(async (runId) => runId !== dead.runId);
    expect(removed).toBe(1);
    await expect(containerOf(dead.runId).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect(existsSync(dead.sandbox.privateDir.host)).toBe(false);
    expect((await containerOf(live.runId).inspect()).State.Running).toBe(true);
    expect(await run(live.sandbox, 'true', [])).toMatchObject({ code: 0 });
  });

  it('tells whether a daemon answers', async () => {
    expect(await dockerAnswers(docker)).toBe(true);
    const nowhere = new Dockerode({ socketPath: join(base, 'no-docker.sock') });
    expect(await dockerAnswers(nowhere)).toBe(false);
    const spec = {
      runId: 'no-daemon',
      executionId: 1,
      teamId: 'team-test',
      workspaceDir: join(base, 'no-daemon'),
      image: null,
      network: 'none' as const,
      limits: { memoryMb: 256, pids: 128, cpus: 1 },
      apiUrl: null,
    };
    const error = await new DockerSandboxBackend(settings, nowhere).open(spec).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'resource_unavailable' });
    expect((error as Error).message).toMatch(/docker daemon does not answer/);
  });
});
