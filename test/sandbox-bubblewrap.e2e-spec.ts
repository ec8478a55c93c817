/**
 * The bubblewrap backend directly (runs end to end are in sandbox-isolation.e2e-spec.ts): what a
 * process sees of the host, its environment, extra read-only paths, programs it cannot find, and
 * the execution's network namespace that its commands share with the API forwarder.
 */
import {
  chmodSync,
  closeSync,
  existsSync,
  symlinkSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { execFile, execFileSync } from 'node:child_process';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runCommand } from '../src/modules/workers/harness/command-runner';
import { BubblewrapSandboxBackend } from '../src/modules/workers/sandbox/backends/bubblewrap/bubblewrap-sandbox';
import {
  cgroupVersion,
  groupDirs,
  sandboxGroupsDir,
} from '../src/modules/workers/sandbox/cgroup-limits';
import { compiledSpawner } from '../src/modules/workers/sandbox/off-loop-spawn';
import type * as OffLoopSpawn from '../src/modules/workers/sandbox/off-loop-spawn';
import type * as BubblewrapModule from '../src/modules/workers/sandbox/backends/bubblewrap/bubblewrap-sandbox';
import type { SandboxForwarder } from '../src/modules/workers/sandbox/sandbox-forwarder';
import type { Sandbox } from '../src/modules/workers/sandbox/sandbox.types';
import { printed } from './support/docker-sandbox';
import { loadedWithSpawnHelper } from './support/spawn-helper-choice';
import { waitFor } from './support/wait';

describe('bubblewrap sandbox', () => {
  let root: string;
  let tools: string;
  let sandbox: Sandbox;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'ambient-bwrap-'));
    mkdirSync(join(root, 'workspace'));
    // A directory under /tmp, which every sandbox replaces with a private one.
    tools = mkdtempSync(join(tmpdir(), 'ambient-bwrap-tools-'));
    writeFileSync(join(tools, 'hello-tool'), '#!/bin/sh\necho "tool says $1"\n');
    chmodSync(join(tools, 'hello-tool'), 0o755);
    writeFileSync(join(tmpdir(), 'ambient-bwrap-host-secret'), 'secret\n');
    const backend = new BubblewrapSandboxBackend({
      readonlyPaths: [tools],
      privateRoot: join(root, '.sandbox'),
    });
    sandbox = await openWithoutApi(backend, join(root, 'workspace'), `bwrap-${process.pid}`);
  });

  afterAll(async () => {
    await sandbox?.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(tools, { recursive: true, force: true });
    rmSync(join(tmpdir(), 'ambient-bwrap-host-secret'), { force: true });
  });

  const run = (command: string, env: Record<string, string> = {}) =>
    runCommand({ sandbox, command, env: { PATH: sandbox.path, ...env }, timeoutMs: 10_000 });

  it("says nothing of the host's files through a link in the workspace: a program behind one is tried inside", async () => {
    const ws = join(root, 'workspace');
    // The same link inside the sandbox leads nowhere in both cases; on this host one target exists.
    symlinkSync(join(tmpdir(), 'ambient-bwrap-host-secret'), join(ws, 'to-host-file'));
    symlinkSync(join(tmpdir(), 'ambient-bwrap-no-such-file'), join(ws, 'to-nothing'));
    const outcome = async (name: string) => {
      const exit = await sandbox.spawn(`./${name}`, [], { env: { PATH: sandbox.path } }).exited;
      const error = exit.startError;
      return {
        code: exit.code,
        error: error && { code: error.code, errno: error.errno, syscall: error.syscall },
      };
    };
    const [toFile, toNothing] = [await outcome('to-host-file'), await outcome('to-nothing')];
    expect({ ...toFile.error, syscall: undefined }).toEqual({
      ...toNothing.error,
      syscall: undefined,
    });
    expect(toFile.code).toBe(toNothing.code);
    // Tried inside: the helper's own report of its exec (refused from this host, it had no errno).
    expect(toNothing.error).toEqual({ code: 'ENOENT', errno: -2, syscall: 'spawn ./to-nothing' });
  });

  it('shows extra read-only paths, even under /tmp, and nothing else of the host /tmp', async () => {
    const result = await run(
      `${join(tools, 'hello-tool')} hi; touch ${tools}/x 2>/dev/null || echo read-only; ` +
        `ls ${tmpdir()}/ambient-bwrap-host-secret 2>/dev/null || echo no-host-tmp`,
    );
    expect(result.output).toBe('tool says hi\nread-only\nno-host-tmp\n');
  });

  it('gives exactly the environment it is handed, and no host configuration', async () => {
    const result = await run('env | sort; ls /etc/mysql /root 2>/dev/null || echo hidden', {
      ONLY: 'this',
    });
    expect(result.output).toBe(
      `ONLY=this\nPATH=${sandbox.path}\nPWD=/workspace\nSHLVL=1\n_=/usr/bin/env\nhidden\n`,
    );
  });

  it("shows the host's /etc entries programs need, read-only, with its own passwd and group", async () => {
    const result = await run(
      'cat /etc/hosts; ls /etc; id -un; id -gn; ' +
        'touch /etc/x 2>/dev/null || echo read-only; ls /etc/shadow 2>/dev/null || echo no-shadow',
    );
    const listed = result.output.split('\n');
    const hosts = readFileSync('/etc/hosts', 'utf8');
    expect(result.output.startsWith(hosts)).toBe(true);
    expect(listed).toEqual(
      expect.arrayContaining(['hosts', 'passwd', 'group', 'ssl', 'ld.so.cache']),
    );
    expect(listed).not.toContain('shadow');
    expect(result.output.endsWith('agent\nagent\nread-only\nno-shadow\n')).toBe(true);
  });

  // As root, uid 1000 inside is the host's root to the kernel's permission checks: every value is
  // written back unchanged, so that a regression shows without changing this host.
  it("cannot change the kernel's settings, even where Ambient runs as root", async () => {
    const writeBack = (path: string) =>
      `v=$(cat ${path}); printf '%s\\n' "$v" 2>/dev/null > ${path} && echo "wrote ${path}" || echo "refused ${path}"`;
    const result = await run(
      [
        writeBack('/proc/sys/kernel/core_pattern'),
        writeBack('/proc/sys/vm/swappiness'),
        // Still the reader's own: its UTS and network namespaces.
        'cat /proc/sys/kernel/hostname',
        'ls /proc/sys/net/ipv4/conf | tr "\\n" " "',
      ].join('; '),
    );
    expect(result.output).toBe(
      'refused /proc/sys/kernel/core_pattern\nrefused /proc/sys/vm/swappiness\nambient-sandbox\nall default lo ',
    );
  });

  it('makes no user namespace of its own where Ambient runs as root', async () => {
    const result = await run('unshare -U true 2>/dev/null && echo made || echo refused');
    expect(result.output).toBe(process.getuid!() === 0 ? 'refused\n' : 'made\n');
  });

  it('reports a program it cannot find as ENOENT', async () => {
    const proc = sandbox.spawn(join(tools, 'no-such-tool'), [], { env: { PATH: sandbox.path } });
    expect((await proc.exited).startError?.code).toBe('ENOENT');
    const byName = sandbox.spawn('no-such-tool', [], { env: { PATH: sandbox.path } });
    expect((await byName.exited).startError?.code).toBe('ENOENT');
  });
});

/** Opens an execution's sandbox on `workspaceDir`, with no API and no network. */
function openWithoutApi(
  backend: BubblewrapSandboxBackend,
  workspaceDir: string,
  runId: string,
): Promise<Sandbox> {
  return backend.open({
    runId,
    executionId: 1,
    teamId: 'team',
    workspaceDir,
    image: null,
    network: 'none',
    limits: { memoryMb: 256, pids: 64, cpus: 1 },
    apiUrl: null,
  });
}

/** Opens an execution's sandbox in `root`/`runId`, with its API bridged to `server`. */
async function openWithApi(
  backend: BubblewrapSandboxBackend,
  root: string,
  runId: string,
  server: Server,
): Promise<Sandbox> {
  mkdirSync(join(root, runId));
  return backend.open({
    runId,
    executionId: 1,
    teamId: 'team',
    workspaceDir: join(root, runId),
    image: null,
    network: 'none',
    limits: { memoryMb: 256, pids: 64, cpus: 1 },
    apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`,
  });
}

/** A backend with its private directories under `root`, nothing extra visible. */
function backendIn(root: string): BubblewrapSandboxBackend {
  return new BubblewrapSandboxBackend({ readonlyPaths: [], privateRoot: join(root, '.sb') });
}

/** An executable shell script at `path` running `body`; its path. */
function script(path: string, body: string): string {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** `file` run to its end: its exit code and what it printed. */
function programRun(
  file: string,
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(file, args, (error, out, err) =>
      resolve({ code: error ? Number(error.code ?? -1) : 0, out, err }),
    );
  });
}

/** Whether process `pid` has ended (and been reaped, or is a zombie). */
function gone(pid: string): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}

/** A command as run_command starts it. */
function runIn(sandbox: Sandbox, command: string) {
  return runCommand({ sandbox, command, env: { PATH: sandbox.path }, timeoutMs: 10_000 });
}

/** The host's processes in the network namespace `ns`, by pid. */
function inNamespace(ns: string): string[] {
  return readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/ns/net`) === ns;
      } catch {
        return false;
      }
    });
}

/** Whether the memory of this host's process `pid` holds `needle` anywhere it can be read. */
function memoryHolds(pid: string, needle: string): boolean {
  const wanted = Buffer.from(needle);
  const step = 1 << 20;
  // Each read overlaps the next by the needle's length: none is missed across a boundary.
  const chunk = Buffer.alloc(step + wanted.length);
  const fd = openSync(`/proc/${pid}/mem`, 'r');
  try {
    for (const line of readFileSync(`/proc/${pid}/maps`, 'utf8').trim().split('\n')) {
      const [range, perms] = line.split(' ');
      if (!perms.startsWith('r') || /\[(vvar|vsyscall)\]$/.test(line)) continue;
      const [start, end] = range.split('-').map((hex) => parseInt(hex, 16));
      for (let at = start; at < end; at += step) {
        let read: number;
        try {
          read = readSync(fd, chunk, 0, Math.min(chunk.length, end - at), at);
        } catch {
          break; // a region the kernel does not let be read this way
        }
        if (chunk.subarray(0, read).includes(wanted)) return true;
      }
    }
    return false;
  } finally {
    closeSync(fd);
  }
}

/** The host's spawn helper that started the sandbox whose pid 1 is `pid1` (its parent, or its bwrap's). */
function hostSpawnHelperOf(pid1: string): string {
  const parentOf = (pid: string) =>
    /^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1];
  const net = readlinkSync(`/proc/${pid1}/ns/net`);
  let pid = parentOf(pid1);
  for (let up = 0; up < 3; up++, pid = parentOf(pid)) {
    const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    if (comm === 'ambient-spawner' && readlinkSync(`/proc/${pid}/ns/net`) !== net) return pid;
  }
  throw new Error(`no spawn helper of the host above ${pid1}`);
}

/** The host's pid of the process named `comm` in the network namespace `ns`. */
function inNamespaceNamed(ns: string, comm: string): string | undefined {
  return inNamespace(ns).find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === comm;
    } catch {
      return false;
    }
  });
}

/** How many of this host's processes have `name` as their argv[0]. */
async function processesNamed(name: string): Promise<number> {
  return readdirSync('/proc').filter((pid) => {
    try {
      return (
        /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === name
      );
    } catch {
      return false;
    }
  }).length;
}

/** The programs (comm: cut at 15 characters) of this host's processes in `ns`, sorted. */
function commsInNamespace(ns: string): string[] {
  return inNamespace(ns)
    .flatMap((pid) => {
      try {
        return [readFileSync(`/proc/${pid}/comm`, 'utf8').trim()];
      } catch {
        return []; // ended meanwhile
      }
    })
    .sort();
}

/**
 * The programs in `ns` once they are `expected` (a command's bwrap pid 1 may outlive the command
 * for a moment), or as they are when that does not come.
 */
async function holdersOf(ns: string, expected: string[]): Promise<string[]> {
  return waitFor(
    async () => commsInNamespace(ns),
    (comms) => comms.join('\n') === expected.join('\n'),
    { what: `${expected.join(', ')} to be alone in the namespace` },
  ).catch(() => commsInNamespace(ns));
}

/**
 * The programs that hold an execution's sandbox for its commands: its spawn helper, and what made
 * the sandbox and waits for it (the spawner's `--confine`, the default, or a bwrap).
 */
function spawnerSandbox(maker: 'spawner' | 'bwrap' = 'spawner'): string[] {
  return ['ambient-spawner', maker === 'bwrap' ? 'bwrap' : 'ambient-spawner'];
}

// Both spawn helpers: the compiled one joins the cgroup and enters the namespace itself, the
// Node one through a shell and nsenter. Both forwarders: the compiled one, and socat where it
// was not built. Every holder of the namespace: the execution's own sandbox, whose spawn helper
// starts the forwarder in it (the default where both are compiled), the compiled forwarder making
// it itself, and a bwrap around the forwarder (socat's, and the benchmarks' baseline). Both ways
// to start commands: the compiled helper inside the execution's sandbox, and a bwrap per command
// (always with the Node helper: no compiled one to bind in). The helper's sandbox made by the
// spawner itself (the default) or by bwrap.
describe.each([
  ['native', 'native', 'sandbox', 'spawner', 'spawner'],
  ['native', 'native', 'sandbox', 'spawner', 'bwrap'],
  ['native', 'native', 'forwarder', 'spawner', 'spawner'],
  ['native', 'native', 'forwarder', 'spawner', 'bwrap'],
  ['native', 'native', 'forwarder', 'bwrap', 'bwrap'],
  ['node', 'native', 'forwarder', 'bwrap', 'bwrap'],
  ['native', 'native', 'bwrap', 'spawner', 'spawner'],
  ['node', 'native', 'bwrap', 'bwrap', 'bwrap'],
  ['native', 'socat', 'bwrap', 'spawner', 'spawner'],
] as const)(
  'bubblewrap sandbox with the API (%s spawn helper, %s forwarder, held by %s, commands by %s, made by %s)',
  (helper, forwarder, holder, commands, maker) => {
    const { Backend, preparesInChild } = loadedWithSpawnHelper(helper, () => ({
      Backend: jest.requireActual<typeof BubblewrapModule>(
        '../src/modules/workers/sandbox/backends/bubblewrap/bubblewrap-sandbox',
      ).BubblewrapSandboxBackend,
      preparesInChild: jest.requireActual<typeof OffLoopSpawn>(
        '../src/modules/workers/sandbox/off-loop-spawn',
      ).preparesInChild,
    }));
    let root: string;
    let server: Server;
    let backend: BubblewrapSandboxBackend;
    const opened: Sandbox[] = [];

    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'ambient-bwrap-api-'));
      server = createServer((req, res) => res.end(`api saw ${req.url}`));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      backend = new Backend({
        readonlyPaths: [],
        privateRoot: join(root, '.sb'),
        forwarder,
        holder,
        commands,
        maker,
      });
    });

    afterAll(async () => {
      await Promise.all(opened.map((s) => s.close()));
      await new Promise((resolve) => server.close(resolve));
      rmSync(root, { recursive: true, force: true });
    });

    async function open(name: string): Promise<Sandbox> {
      // Named by helper, forwarder and holder too: run ids name the sandboxes' cgroups, the host's.
      const sandbox = await openWithApi(
        backend,
        root,
        `${helper}-${forwarder}-${holder}-${commands}-${maker}-${name}`,
        server,
      );
      opened.push(sandbox);
      return sandbox;
    }

    it('starts its processes with that helper', () => {
      // npm ci builds the compiled helper wherever a C compiler is (CI installs one).
      const built = existsSync(join(__dirname, '..', 'native', 'build', 'ambient-spawner'));
      expect(preparesInChild()).toBe(helper === 'native' && built);
    });

    it("runs every command of an execution in its own network namespace, where the API's forwarder listens", async () => {
      const [one, two] = [await open('api-one'), await open('api-two')];
      const netns = 'readlink /proc/self/ns/net';
      const api = `curl -sS ${one.apiUrl}/x; echo`;
      const first = await runIn(one, `${netns}; ${api}`);
      const second = await runIn(one, `${netns}; ${api}; hostname; id -u`);
      const other = await runIn(two, netns);
      const [ns] = first.output.split('\n');
      expect(first.output).toBe(`${ns}\napi saw /api/x\n`);
      expect(second.output).toBe(`${ns}\napi saw /api/x\nambient-sandbox\n1000\n`);
      expect(other.output).not.toBe(`${ns}\n`);
      expect(ns).not.toBe(readlinkSync('/proc/self/ns/net'));
    });

    const holders = {
      // The forwarder beside the spawn helper, the sandbox's pid 1 (its bwrap stays outside).
      sandbox: ['.ambient-forwar', 'ambient-spawner'],
      // The forwarder, pid 1 of a pid namespace of its own, and its parent that waits for it.
      forwarder: ['ambient-forward', 'ambient-forward'],
      bwrap: forwarder === 'native' ? ['.ambient-forwar', 'bwrap'] : ['bwrap', 'socat'],
    };
    const expected = [
      ...holders[holder],
      ...(commands === 'spawner' && holder !== 'sandbox' ? spawnerSandbox(maker) : []),
    ].sort();
    it(`holds the namespace with ${expected.join(', ')}, nothing else`, async () => {
      const sandbox = await open('api-program');
      // Once a command reached the API (a sandbox's own forwarder starts at the first connection).
      const ns = (
        await runIn(sandbox, `curl -sS ${sandbox.apiUrl}/x >/dev/null; readlink /proc/self/ns/net`)
      ).output.trim();
      // Seen from this host once the command ended.
      expect(await holdersOf(ns, expected)).toEqual(expected);
    });

    // Each a sleep named for this combination (bash's exec -a), counted from this host.
    const tag = `ambient-left-${helper}-${forwarder}-${holder}-${commands}-${maker}`;
    const named = (n: number) => `bash -c 'exec -a ${tag} sleep ${300 + n}'`;
    const leftOnHost = () => processesNamed(tag);

    it('ends what a command leaves running, however it detached, once the command has ended', async () => {
      const sandbox = await open('api-leftovers');
      const started = await runIn(
        sandbox,
        `(setsid ${named(1)} &); ${named(2)} & nohup sh -c "${named(3)}" >/dev/null 2>&1 & ` +
          // Until all three run (at most ~8 s under load), then how many do.
          `count() { ps -e -o args= | grep -c "^${tag}"; }; ` +
          `for i in $(seq 160); do [ "$(count)" = 3 ] && break; sleep 0.05; done; count`,
      );
      expect(started.output).toBe('3\n');
      expect(await waitFor(leftOnHost, (n) => n === 0, { what: 'the leftovers to end' })).toBe(0);
    });

    /** Starts `script`, kills it once both of its named sleeps run, and counts what is left. */
    async function killedWithAll(name: string, script: string): Promise<void> {
      const sandbox = await open(name);
      const proc = sandbox.spawn('/bin/sh', ['-c', script], { env: { PATH: sandbox.path } });
      await waitFor(leftOnHost, (n) => n === 2, { what: 'both sleeps to run' });
      proc.kill();
      const exit = await proc.exited;
      expect(exit.signal === 'SIGKILL' || exit.code === 137).toBe(true);
      expect(await waitFor(leftOnHost, (n) => n === 0, { what: 'both sleeps to end' })).toBe(0);
    }

    it('kills a running command with all it started', async () => {
      await killedWithAll('api-kill', `(setsid ${named(4)} &); ${named(5)}`);
    });

    it('kills a command that stopped the process waiting for it, with all it started', async () => {
      // $PPID: the command's supervisor (or, with a bwrap per command, its pid 1, which ignores it).
      await killedWithAll('api-stopped', `(setsid ${named(6)} &); kill -STOP $PPID; ${named(7)}`);
    });

    it('leaves nothing running after a command killed the process waiting for it', async () => {
      const sandbox = await open('api-orphaned');
      // It says so once its first sleep runs (at most ~10 s under load), then kills its supervisor:
      // what it left may be swept at once, too soon for a count from this host to see it.
      const proc = sandbox.spawn(
        '/bin/sh',
        [
          '-c',
          `(setsid ${named(8)} &); i=0; until ps -e -o args= | grep -q "^${tag}" || [ $i -ge 200 ]; ` +
            `do i=$((i+1)); sleep 0.05; done; echo started; kill -9 $PPID; ${named(9)}`,
        ],
        { env: { PATH: sandbox.path } },
      );
      proc.stderr.resume();
      expect(await printed(proc.stdout, /started\n/)).toBe('started\n');
      // Its supervisor gone, the command ends with it, unasked: what it left must go all the same.
      // A bwrap's pid 1 ignores the kill instead, and the command is killed here.
      if (commands === 'bwrap') proc.kill();
      await proc.exited;
      expect(await waitFor(leftOnHost, (n) => n === 0, { what: 'the sleeps to end' })).toBe(0);
    });

    it('reaps what a command leaves ending while it runs (no zombie holds a pid)', async () => {
      const sandbox = await open('api-zombies');
      const result = await runIn(
        sandbox,
        'for i in $(seq 50); do (true &); done; sleep 0.3; ps -e -o stat= | grep -c "^Z" || true',
      );
      expect(result.output).toBe('0\n');
    });

    if (holder === 'sandbox') {
      it('starts the forwarder at the first connection to one of its ports, not before', async () => {
        const sandbox = await open('api-lazy');
        const count = 'pgrep -c -x .ambient-forwar || true';
        const seen = await runIn(
          sandbox,
          `${count}; curl -sS ${sandbox.apiUrl}/x; echo; ${count}; curl -sS ${sandbox.apiUrl}/y; echo; ${count}`,
        );
        expect(seen.output).toBe('0\napi saw /api/x\n1\napi saw /api/y\n1\n');
      });

      it('forks the forwarder once the sandbox has room again, when its pids limit refused it at the first connection', async () => {
        const name = 'api-pids';
        const sandbox = await open(name);
        const runId = `${helper}-${forwarder}-${holder}-${commands}-${maker}-${name}`;
        const version = (await cgroupVersion())!;
        const group = readdirSync(sandboxGroupsDir(version)).find((g) =>
          g.startsWith(`${runId}-1.`),
        );
        const limit = join(groupDirs(version, group!).pids, 'pids.max');
        const current = Number(readFileSync(join(dirname(limit), 'pids.current'), 'utf8'));
        // Room for the command's supervisor, its shell and curl; none for the forwarder.
        writeFileSync(limit, String(current + 3));
        const refused = await runIn(sandbox, `curl -s -m 1 ${sandbox.apiUrl}/x || echo unanswered`);
        writeFileSync(limit, '64');
        expect(refused.output).toBe('unanswered\n');
        const answered = await runIn(sandbox, `curl -sS -m 5 ${sandbox.apiUrl}/y`);
        expect(answered.output).toBe('api saw /api/y');
      });

      it("keeps no command's arguments, environment, stdin or output in the forwarder's memory, pid 1's or the host helper's", async () => {
        const sandbox = await open('api-zeroed');
        const marker = `zeroed-${process.pid}-${Date.now()}`;
        const command = sandbox.spawn(
          '/bin/sh',
          ['-c', `cat >/dev/null; echo "$MARK-out"; : ${marker}-arg`],
          { env: { PATH: sandbox.path, MARK: `${marker}-env` }, stdin: 'pipe' },
        );
        command.stdin!.end(`${marker}-stdin`);
        expect(await printed(command.stdout, /.*-out\n/)).toBe(`${marker}-env-out\n`);
        command.stdout.resume();
        await command.exited;
        // The first connection forks the forwarder from pid 1, after that command.
        const ns = (
          await runIn(
            sandbox,
            `curl -sS ${sandbox.apiUrl}/x >/dev/null; readlink /proc/self/ns/net`,
          )
        ).output.trim();
        const forwarder = inNamespaceNamed(ns, '.ambient-forwar')!;
        const pid1 = inNamespaceNamed(ns, 'ambient-spawner')!;
        // The host's spawn helper: pid 1's parent, or its bwrap's.
        const hostHelper = hostSpawnHelperOf(pid1);
        expect([forwarder, pid1, hostHelper].map((pid) => memoryHolds(pid, marker))).toEqual([
          false,
          false,
          false,
        ]);
        // Where a process does hold it, it is seen: a running command's environment.
        const holder = sandbox.spawn('/bin/sh', ['-c', 'exec sleep 30'], {
          env: { PATH: sandbox.path, MARK: `${marker}-env` },
        });
        const sleeping = await waitFor(
          async () => inNamespaceNamed(ns, 'sleep'),
          (pid) => pid !== undefined,
          { what: 'the sleep to run' },
        );
        expect(memoryHolds(sleeping!, marker)).toBe(true);
        holder.kill();
        await holder.exited;
      });

      it('starts the forwarder inside the sandbox, where commands can neither trace it nor read its memory', async () => {
        const sandbox = await open('api-inside');
        const pid = `curl -s ${sandbox.apiUrl}/x >/dev/null; pid=$(pgrep -x .ambient-forwar)`;
        const seen = await runIn(
          sandbox,
          `${pid}; echo $pid; grep -E '^(CapEff|NoNewPrivs):' /proc/$pid/status | tr -s '\t ' ' '; ` +
            `cat /proc/$pid/environ >/dev/null 2>&1 && echo readable || echo unreadable; ` +
            `cat /proc/1/comm`,
        );
        const [forwarderPid, ...rest] = seen.output.trim().split('\n');
        // A child of the helper, not pid 1: only the helper is the namespace's init.
        expect(Number(forwarderPid)).toBeGreaterThan(1);
        expect(rest).toEqual([
          'CapEff: 0000000000000000',
          'NoNewPrivs: 1',
          'unreadable',
          'ambient-spawner',
        ]);
        // Forked by the helper, not exec'd: both are the one program (no exec, no static start).
        const pidNs = (await runIn(sandbox, 'readlink /proc/self/ns/pid')).output.trim();
        const hostPidOf = (nsPid: string) =>
          readdirSync('/proc').find((pid) => {
            try {
              const status = readFileSync(`/proc/${pid}/status`, 'utf8');
              return (
                readlinkSync(`/proc/${pid}/ns/pid`) === pidNs &&
                new RegExp(`^NSpid:.*\\s${nsPid}$`, 'm').test(status)
              );
            } catch {
              return false;
            }
          })!;
        const program = (nsPid: string) => statSync(`/proc/${hostPidOf(nsPid)}/exe`).ino;
        expect(program(forwarderPid!)).toBe(program('1'));
      });

      it("keeps the forwarder's ports from a command that kills it", async () => {
        const sandbox = await open('api-takeover');
        // The listening sockets are the helper's: a command inherits none of them either.
        const fds = await runIn(sandbox, 'ls /proc/self/fd | tr "\\n" " "');
        expect(fds.output).toBe('0 1 2 3 ');
        const bind =
          "perl -MSocket -e 'socket(S, PF_INET, SOCK_STREAM, 0); " +
          'setsockopt(S, SOL_SOCKET, SO_REUSEADDR, 1); ' +
          'print bind(S, sockaddr_in(7171, inet_aton("127.0.0.1"))) ? "bound\\n" : "refused: $!\\n"\'';
        const result = await runIn(
          sandbox,
          `curl -s ${sandbox.apiUrl}/first >/dev/null; pkill -9 -x .ambient-forwar && echo killed; ${bind}; ` +
            // Never started again: the execution's API connections wait, answered by nobody.
            `curl -s -m 1 ${sandbox.apiUrl}/gone || echo unanswered`,
        );
        expect(result.output).toBe('killed\nrefused: Address already in use\nunanswered\n');
      });
    }

    if (holder === 'forwarder') {
      it("confines the forwarder: the private directory as its root, no capability, out of the commands' sight", async () => {
        const sandbox = await open('api-confined');
        const seen = await runIn(
          sandbox,
          'readlink /proc/self/ns/net; ps -e -o comm= | grep -c ambient-forward',
        );
        const [ns, count] = seen.output.trim().split('\n');
        expect(count).toBe('0');
        expect(await holdersOf(ns!, expected)).toEqual(expected);
        const pids = inNamespace(ns!).filter(
          (pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'ambient-forward',
        );
        expect(pids).toHaveLength(2);
        for (const pid of pids) {
          const status = readFileSync(`/proc/${pid}/status`, 'utf8');
          expect(status).toMatch(/^CapEff:\s+0+$/m);
          expect(status).toMatch(/^CapPrm:\s+0+$/m);
          expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
          // Its root is the execution's private directory: the API's socket, nothing of the host.
          expect(readdirSync(`/proc/${pid}/root`)).toContain('api.sock');
          expect(readdirSync(`/proc/${pid}/root`)).not.toContain('usr');
          // Its user namespace maps the sandbox's user to this host's, as bwrap's did.
          expect(readFileSync(`/proc/${pid}/uid_map`, 'utf8').trim().split(/\s+/)).toEqual([
            '1000',
            String(process.getuid!()),
            '1',
          ]);
          // An IPC namespace of its own: no SysV object of the host's.
          expect(readlinkSync(`/proc/${pid}/ns/ipc`)).not.toBe(readlinkSync('/proc/self/ns/ipc'));
        }
        // The one that forwards (the other only waits for it) is pid 1 of a pid namespace of its
        // own: no process of this host's is one it can name, signal or trace.
        const own = readlinkSync('/proc/self/ns/pid');
        const forwarding = pids.filter((pid) => readlinkSync(`/proc/${pid}/ns/pid`) !== own);
        expect(forwarding).toHaveLength(1);
        expect(readFileSync(`/proc/${forwarding[0]}/status`, 'utf8')).toMatch(
          /^NSpid:\s+\d+\s+1$/m,
        );
      });
    }

    it("hands a command its own standard input, not the wait for the forwarder's", async () => {
      const sandbox = await open('api-stdin');
      const proc = sandbox.spawn('/bin/sh', ['-c', 'cat; echo " read"'], {
        env: { PATH: sandbox.path },
        stdin: 'pipe',
      });
      let out = '';
      proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      proc.stdin!.end('from the caller');
      await proc.exited;
      expect(out).toBe('from the caller read\n');
    });

    it('starts no command once the namespace is gone, rather than one elsewhere', async () => {
      const sandbox = await open('api-closed');
      await sandbox.close();
      const proc = sandbox.spawn('/bin/true', [], { env: { PATH: sandbox.path } });
      expect((await proc.exited).startError?.code).toBe('ESRCH');
    });
  },
);

describe('bubblewrap sandbox on a host that refuses the forwarder its namespaces', () => {
  let root: string;
  let server: Server;
  const opened: Sandbox[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'ambient-bwrap-refused-'));
    server = createServer((req, res) => res.end(`api saw ${req.url}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
    await new Promise((resolve) => server.close(resolve));
    rmSync(root, { recursive: true, force: true });
  });

  it('holds the namespace with a bwrap instead, and stops asking the forwarder', async () => {
    // As when the sandbox cannot hold the namespace itself (no compiled spawn helper).
    const backend = new BubblewrapSandboxBackend({
      readonlyPaths: [],
      privateRoot: join(root, '.sb'),
      holder: 'forwarder',
    });
    // The forwarder as a host that refuses it (Ubuntu's AppArmor restriction of unprivileged
    // user namespaces, say) leaves it: it says so and exits 78. Each attempt is counted.
    const attempts = join(root, 'attempts');
    const refusing = script(
      join(root, 'refusing-forwarder'),
      `echo attempt >> ${attempts}\necho "cannot make its namespaces" >&2\nexit 78`,
    );
    const internals = backend as unknown as { forwarder: SandboxForwarder };
    internals.forwarder = { ...internals.forwarder, namespacedCommand: () => [refusing] };
    for (const name of ['first', 'second']) {
      const sandbox = await openWithApi(backend, root, `refused-${name}`, server);
      opened.push(sandbox);
      const result = await runIn(
        sandbox,
        `readlink /proc/self/ns/net; curl -sS ${sandbox.apiUrl}/x; echo`,
      );
      const [ns, answer] = result.output.trim().split('\n');
      expect(answer).toBe('api saw /api/x');
      // Held by a bwrap around the forwarder, not a forwarder each command starts for itself.
      const bwrapHolder = ['.ambient-forwar', 'bwrap', ...spawnerSandbox()].sort();
      expect(await holdersOf(ns!, bwrapHolder)).toEqual(bwrapHolder);
    }
    expect(readFileSync(attempts, 'utf8')).toBe('attempt\n');
  });
});

describe('bubblewrap sandbox asked for an egress proxy it cannot reach', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'ambient-bwrap-noproxy-'));
    mkdirSync(join(root, 'workspace'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('refuses it, leaving no cgroup and no copy of /etc behind', async () => {
    const backend = backendIn(root);
    (backend as unknown as { forwarder: SandboxForwarder | null }).forwarder = null;
    const runId = `noproxy-${process.pid}`;
    const opening = backend.open({
      runId,
      executionId: 1,
      teamId: 'team',
      workspaceDir: join(root, 'workspace'),
      image: null,
      network: 'allowlist',
      limits: { memoryMb: 256, pids: 64, cpus: 1 },
      egressProxy: { listen: () => Promise.resolve() },
    });
    await expect(opening).rejects.toThrow(/needs a port forwarder/);
    const version = await cgroupVersion();
    const groups = version ? sandboxGroupsDir(version) : null;
    if (groups && existsSync(groups)) {
      // Named for the execution, then this worker's pid and start time.
      expect(readdirSync(groups).filter((name) => name.startsWith(`${runId}-1.`))).toEqual([]);
    }
    expect(existsSync(join(root, '.sb')) ? readdirSync(join(root, '.sb')) : []).toEqual([]);
  });
});

describe('bubblewrap sandbox whose spawn helper does not start', () => {
  let root: string;
  let sandbox: Sandbox | undefined;
  let withApi: Sandbox | undefined;
  let server: Server;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'ambient-bwrap-nohelper-'));
    mkdirSync(join(root, 'workspace'));
    server = createServer((req, res) => res.end(`api saw ${req.url}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await Promise.all([sandbox?.close(), withApi?.close()]);
    await new Promise((resolve) => server.close(resolve));
    rmSync(root, { recursive: true, force: true });
  });

  it('holds the namespace from the host and starts a bwrap per command, when it was to start the forwarder', async () => {
    const backend = backendIn(root);
    const broken = script(join(root, 'broken-forwarding-helper'), 'echo "no helper" >&2\nexit 71');
    (backend as unknown as { spawnerBinary: string }).spawnerBinary = broken;
    withApi = await openWithApi(backend, root, `nohelper-api-${process.pid}`, server);
    const result = await runIn(withApi, `echo $$; cat /proc/1/comm; curl -sS ${withApi.apiUrl}/x`);
    expect(result.output).toBe('2\nbwrap\napi saw /api/x');
  });

  it('falls back from the sandbox holding the namespace when the forwarder does not start in it', async () => {
    const backend = backendIn(root);
    // A forwarder that would not start: a socket path it refuses (108 bytes or more), which the
    // helper asks it about before it says it is ready (or, exec'ing it, waits for its ready line
    // in vain), and so exits 71.
    const internals = backend as unknown as { forwarder: SandboxForwarder };
    const command = internals.forwarder.command.bind(internals.forwarder);
    internals.forwarder = {
      ...internals.forwarder,
      command: (forwards, program) =>
        command(
          forwards.map((f) => ({ ...f, socketPath: `/${'x'.repeat(110)}` })),
          program,
        ),
    };
    const sandbox = await openWithApi(backend, root, `noforwarder-${process.pid}`, server);
    try {
      // Not the helper as pid 1 (it exited 71): the host's holder and a bwrap per command.
      const result = await runIn(sandbox, 'cat /proc/1/comm; readlink /proc/self/ns/net');
      const [pid1, ns] = result.output.trim().split('\n');
      expect(pid1).toBe('bwrap');
      expect(await holdersOf(ns!, ['ambient-forward', 'ambient-forward'])).toEqual([
        'ambient-forward',
        'ambient-forward',
      ]);
    } finally {
      await sandbox.close();
    }
  });

  it('starts a bwrap per command instead', async () => {
    const backend = backendIn(root);
    // In place of the compiled helper (bound in and started as pid 1): a program that never
    // says it is ready.
    const broken = script(join(root, 'broken-helper'), 'echo "no helper here" >&2\nexit 1');
    (backend as unknown as { spawnerBinary: string }).spawnerBinary = broken;
    sandbox = await openWithoutApi(backend, join(root, 'workspace'), `nohelper-${process.pid}`);
    // The command is pid 2 of a pid namespace of its own, whose pid 1 is its bwrap's: no helper.
    const result = await runIn(sandbox, 'echo $$; cat /proc/1/comm');
    expect(result.output).toBe('2\nbwrap\n');
  });
});

describe('bubblewrap sandbox made by the spawner itself (--confine)', () => {
  const spawner = join(__dirname, '..', 'native', 'build', 'ambient-spawner');
  let root: string;
  const opened: Sandbox[] = [];

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'ambient-bwrap-confine-'));
    writeFileSync(join(tmpdir(), 'ambient-bwrap-confine-secret'), 'secret\n');
  });

  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
    rmSync(join(tmpdir(), 'ambient-bwrap-confine-secret'), { force: true });
    rmSync(root, { recursive: true, force: true });
  });

  /** The host's view of `sandbox`: its pid 1, what made it (pid 1's parent) and its processes. */
  async function madeBy(sandbox: Sandbox) {
    const pidNs = (await runIn(sandbox, 'readlink /proc/self/ns/pid')).output.trim();
    const inside = readdirSync('/proc').filter((pid) => {
      try {
        return /^\d+$/.test(pid) && readlinkSync(`/proc/${pid}/ns/pid`) === pidNs;
      } catch {
        return false;
      }
    });
    const status = (pid: string) => readFileSync(`/proc/${pid}/status`, 'utf8');
    const pid1 = inside.find((pid) => /^NSpid:.*\s1$/m.test(status(pid)))!;
    const maker = /^PPid:\s+(\d+)$/m.exec(status(pid1))![1]!;
    return { inside, pid1, maker, comm: readFileSync(`/proc/${maker}/comm`, 'utf8').trim() };
  }

  async function openMadeBy(maker: 'spawner' | 'bwrap', name: string): Promise<Sandbox> {
    const backend = new BubblewrapSandboxBackend({
      readonlyPaths: [],
      privateRoot: join(root, '.sb'),
      maker,
    });
    mkdirSync(join(root, name));
    const sandbox = await openWithoutApi(backend, join(root, name), `confine-${name}`);
    opened.push(sandbox);
    return sandbox;
  }

  // What a command sees of its sandbox, as far as it can tell: every mount with its options, its
  // user and capabilities, the devices, /proc's covers, the network, what it may write and make.
  const PROBE = [
    'id',
    'hostname',
    "findmnt -R / -n -o TARGET,FSTYPE,OPTIONS | sed 's/^[^/]*//'",
    "grep -E '^(Cap|NoNewPrivs|Seccomp:)' /proc/self/status",
    'cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups',
    "ls -l /dev | awk 'NR > 1 { print $1, $NF }'",
    'ls -A /',
    'cat /proc/1/comm; echo $$',
    'cat /proc/net/dev | tail -n +3',
    `ls ${tmpdir()}/ambient-bwrap-confine-secret 2>&1 || true`,
    'touch /usr/x 2>&1 || true',
    'echo y > /workspace/w && echo workspace-written',
    'echo x > /tmp/t && echo tmp-written',
    'cat /proc/interrupts 2>&1 | head -1',
    'echo 1 > /proc/sys/kernel/ns_last_pid 2>&1 || true',
    'unshare -U true 2>&1; echo "unshare: $?"',
    'unshare -n true 2>&1; echo "unshare -n: $?"',
    'ulimit -a | md5sum',
  ].join('; ');

  it("is the sandbox bwrap makes: the same mounts and their options, user, capabilities, devices, /proc's covers and network", async () => {
    const byBwrap = await runIn(await openMadeBy('bwrap', 'by-bwrap'), PROBE);
    const bySpawner = await runIn(await openMadeBy('spawner', 'by-spawner'), PROBE);
    expect(bySpawner.exitCode).toBe(0);
    expect(bySpawner.output).toBe(byBwrap.output);
    // What the comparison stands on (an empty probe would compare equal too).
    expect(bySpawner.output).toMatch(/^uid=1000\(agent\) gid=1000\(agent\) groups=1000\(agent\)$/m);
    expect(bySpawner.output).toMatch(/^\/usr +\S+ +ro,nosuid,nodev/m);
    expect(bySpawner.output).toMatch(/^CapBnd:\s+0+$/m);
    expect(bySpawner.output).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(bySpawner.output).toMatch(/^ambient-spawner\n\d+$/m);
    expect(bySpawner.output).toContain('No such file or directory');
    expect(bySpawner.output).toContain('workspace-written\ntmp-written\n');
  });

  it("is made in the host's spawn helper's own child (no bwrap, no exec of --confine waiting for it), and its close ends it alone", async () => {
    const sandbox = await openMadeBy('spawner', 'processes');
    const made = await madeBy(sandbox);
    // The helper alone is left in it once the command and its supervisor have ended.
    expect(made.inside).toEqual([made.pid1]);
    expect(made.comm).toBe('ambient-spawner');
    // Its parent is the helper that starts this service's processes, not a `--confine` of its own.
    const maker = readFileSync(`/proc/${made.maker}/cmdline`, 'utf8').split('\0').filter(Boolean);
    expect(maker).toEqual([compiledSpawner()]);
    await sandbox.close();
    expect(gone(made.pid1)).toBe(true);
    expect(gone(made.maker)).toBe(false);
  });

  it('ends with the spawn helper that made it, killed outright; the next sandbox gets a new helper', async () => {
    const sandbox = await openMadeBy('spawner', 'outer-killed');
    const made = await madeBy(sandbox);
    process.kill(Number(made.maker), 'SIGKILL');
    await waitFor(
      () => Promise.resolve(gone(made.pid1) && !existsSync(`/proc/${made.maker}`)),
      (isGone) => isGone,
      { what: "the sandbox's pid 1 to end with its maker, and the maker to be reaped" },
    );
    // Two sandboxes go to the two helpers: the one left, and a new one in the killed one's place.
    const makers = new Set<string>();
    for (const name of ['after-kill-1', 'after-kill-2']) {
      const next = await openMadeBy('spawner', name);
      expect((await runIn(next, 'echo alive')).output).toBe('alive\n');
      makers.add((await madeBy(next)).maker);
    }
    expect(makers.size).toBe(2);
    expect(makers.has(made.maker)).toBe(false);
  });

  it('refuses an option it does not know, or a sandbox without what Ambient always asks for, before it makes anything', async () => {
    const base = [
      '--unshare-user',
      '--unshare-pid',
      '--cap-drop',
      'ALL',
      '--die-with-parent',
      '--new-session',
      '--ro-bind',
      '/usr',
      '/usr',
      ...['lib', 'lib64'].flatMap((dir) => ['--symlink', `usr/${dir}`, `/${dir}`]),
      '--as-pid-1',
    ];
    const marker = join(root, 'ran');
    const run = (args: string[]) =>
      programRun(spawner, ['--confine', ...args, '--', '/usr/bin/touch', marker]);
    const unknown = await run([...base, '--seccomp', '3']);
    expect(unknown).toEqual({
      code: 64,
      out: '',
      err: expect.stringContaining('unknown option --seccomp'),
    });
    const weaker = await run(base.filter((arg) => arg !== '--new-session'));
    expect(weaker.code).toBe(64);
    expect(weaker.err).toMatch(/needs .*--new-session/);
    // A source that is not there is this sandbox's failure (71), not the host refusing (78).
    const missing = await run([...base, '--bind', join(root, 'no-such-dir'), '/x']);
    expect(missing.code).toBe(71);
    expect(missing.err).toContain('no-such-dir: No such file or directory');
    expect(existsSync(marker)).toBe(false);
    // And with all of it, the program runs (as the sandbox's uid, in a workspace it may write).
    expect(await run([...base, '--bind', root, root, '--uid', '1000', '--gid', '1000'])).toEqual({
      code: 0,
      out: '',
      err: '',
    });
    expect(existsSync(marker)).toBe(true);
  });

  /**
   * A backend whose spawner is a script: answering the bare `--confine` probe with `probe`'s exit
   * code, and each sandbox it is asked for with `exitCode`, or by reading requests until its stdin
   * ends, as a spawner built before `--confine` does (each counted in `attempts`).
   */
  function backendWithSpawner(name: string, probe: number, exitCode: number | 'reads requests') {
    const backend = new BubblewrapSandboxBackend({
      readonlyPaths: [],
      privateRoot: join(root, '.sb'),
    });
    const attempts = join(root, `${name}-attempts`);
    const fake = script(
      join(root, name),
      `[ "$#" = 1 ] && exit ${probe}\necho attempt >> ${attempts}\n` +
        (exitCode === 'reads requests'
          ? 'exec cat > /dev/null'
          : `echo "ambient-spawner --confine: mount_setattr: Function not implemented" >&2\nexit ${exitCode}`),
    );
    (backend as unknown as { maker: { confiner: string } }).maker.confiner = fake;
    const asked = () =>
      existsSync(attempts) ? readFileSync(attempts, 'utf8').split('\n').length - 1 : 0;
    return { backend, asked };
  }

  async function openTwice(backend: BubblewrapSandboxBackend, name: string): Promise<string[]> {
    const makers: string[] = [];
    for (const which of ['first', 'second']) {
      mkdirSync(join(root, `${name}-${which}`));
      const sandbox = await openWithoutApi(
        backend,
        join(root, `${name}-${which}`),
        `confine-${name}-${which}`,
      );
      opened.push(sandbox);
      // The helper runs as pid 1 whatever made the sandbox.
      makers.push((await madeBy(sandbox)).comm);
    }
    return makers;
  }

  it('goes to bwrap where the host refuses the spawner (78), and asks the spawner no more', async () => {
    const { backend, asked } = backendWithSpawner('refusing-spawner', 64, 78);
    expect(await openTwice(backend, 'refused')).toEqual(['bwrap', 'bwrap']);
    expect(asked()).toBe(1);
  });

  it('goes to bwrap for one sandbox the spawner failed otherwise (71), and asks it again for the next', async () => {
    const { backend, asked } = backendWithSpawner('failing-spawner', 64, 71);
    expect(await openTwice(backend, 'failed')).toEqual(['bwrap', 'bwrap']);
    expect(asked()).toBe(2);
  });

  it('never asks a spawner built before --confine (which would wait for requests), and says so', async () => {
    // The bare option taken for its host mode: it reads requests until its stdin ends (at once for
    // the probe, whose stdin is /dev/null); asked for a sandbox, it would never say it was ready,
    // and each open would wait the 30 s the helper is given (beyond this test's time).
    const { backend, asked } = backendWithSpawner('old-spawner', 0, 'reads requests');
    expect(await openTwice(backend, 'old')).toEqual(['bwrap', 'bwrap']);
    expect(asked()).toBe(0);
  });

  it('never asks a spawner built without --confine (where confine.c does not compile), which says so', async () => {
    // As scripts/build-native.mjs builds it there.
    const without = join(root, 'spawner-without-confine');
    execFileSync('cc', [
      '-O2',
      '-DAMBIENT_NO_CONFINE',
      '-o',
      without,
      join(__dirname, '..', 'native', 'spawner.c'),
    ]);
    expect(await programRun(without, ['--confine'])).toEqual({
      code: 69,
      out: '',
      err: 'ambient-spawner: built without --confine\n',
    });
    const backend = new BubblewrapSandboxBackend({
      readonlyPaths: [],
      privateRoot: join(root, '.sb'),
    });
    (backend as unknown as { maker: { confiner: string } }).maker.confiner = without;
    expect(await openTwice(backend, 'without')).toEqual(['bwrap', 'bwrap']);
  });

  it('binds a source reached through an absolute symlink, as bwrap does', async () => {
    mkdirSync(join(root, 'real-workspace'));
    symlinkSync(join(root, 'real-workspace'), join(root, 'linked-workspace'));
    const backend = new BubblewrapSandboxBackend({
      readonlyPaths: [],
      privateRoot: join(root, '.sb'),
    });
    const sandbox = await openWithoutApi(backend, join(root, 'linked-workspace'), 'confine-linked');
    opened.push(sandbox);
    expect((await madeBy(sandbox)).comm).toBe('ambient-spawner');
    expect((await runIn(sandbox, 'echo through > /workspace/f && cat /workspace/f')).output).toBe(
      'through\n',
    );
    expect(readFileSync(join(root, 'real-workspace', 'f'), 'utf8')).toBe('through\n');
  });
});
