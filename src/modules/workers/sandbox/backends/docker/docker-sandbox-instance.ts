import type Dockerode from 'dockerode';
import { lchown } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';
import { PassThrough } from 'node:stream';
import type { AppConfig } from '../../../../../config/app-config';
import {
  SANDBOX_PATH,
  SANDBOX_PRIVATE_DIR,
  SANDBOX_WORKDIR,
  type Sandbox,
  type SandboxProcess,
  type SandboxSpawnOptions,
  type SandboxSpec,
} from '../../sandbox.types';
import { chownTree } from './chown-tree';
import { containerInitAlive, type ContainerInit } from './container-init';
import { KILLER_DIR, killerDirOf, tellKiller } from './container-killer';
import type { SandboxSpawner } from '../../sandbox-spawner';
import type { LaunchedCommand } from './container-launcher';
import { containerSpawner, forgetContainerSpawner } from './container-spawner';
import { apiError, daemonDown, reason } from './docker-errors';
import { DockerExecProcess, type DockerLauncherTarget } from './docker-exec-process';
import { commitSnapshotImage, type SnapshotImageOf } from './docker-snapshot-image';
import type { NetnsBridge, NetnsForwarder } from './netns-bridge';

type SandboxSettings = AppConfig['sandbox'];

/** How long a killed command's container may still look alive to the daemon while being removed. */
const LOSS_SETTLE_MS = 3_000;

/**
 * Prints the OOM-kill and pids-limit counters of the container's cgroup (v1 or v2; the container
 * sees its own cgroup at /sys/fs/cgroup) with shell builtins only.
 */
const LIMIT_COUNTERS = [
  'for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do',
  '  [ -r "$f" ] && while read -r k v; do [ "$k" = oom_kill ] && echo "memory $v"; done <"$f"',
  'done',
  'for f in /sys/fs/cgroup/pids/pids.events /sys/fs/cgroup/pids.events; do',
  '  [ -r "$f" ] && while read -r k v; do [ "$k" = max ] && echo "pids $v"; done <"$f"',
  'done',
  'exit 0',
].join('\n');

export interface StartedContainer {
  container: Dockerode.Container;
  bridge: NetnsBridge | null;
  /** The egress proxy's forwarder in its network namespace (null: network none). */
  proxyForwarder: NetnsForwarder | null;
  /** Its private directory on the host (with the killer's beside it). */
  privateDir: string;
  /** Its init as a process of this host (null: the daemon is not local, or this is not root). */
  init: ContainerInit | null;
}

/**
 * Whether the sandbox's close was asked for, as its container's start sees it. Its `signal`, when
 * there is one, aborts at that moment: a start waiting its turn (see ColdStartSlots) gives up at
 * once instead of holding the close up. DockerSandbox always gives one.
 */
export interface CloseRequested {
  (): boolean;
  readonly signal?: AbortSignal;
}

/** One execution's sandbox on docker: its container, its processes, its end. */
export class DockerSandbox implements Sandbox {
  readonly backend = 'docker' as const;
  readonly workdir = SANDBOX_WORKDIR;
  readonly path = SANDBOX_PATH;
  readonly privateDir: { host: string; inside: string };
  /** The container, running, with the API bridged into it; rejects saying why it is not. */
  private readonly ready: Promise<StartedContainer>;
  private closeRequested = false;
  /** Aborted at close (see CloseRequested). */
  private readonly closeAborts = new AbortController();
  private closing: Promise<void> | null = null;
  private oomKills = 0;
  private pidsMaxHits = 0;
  private readonly launcher: DockerLauncherTarget | null;
  /** Commands of the launcher whose output may still come: ended at close. */
  private readonly launched = new Set<LaunchedCommand>();
  /**
   * Processes not yet ended: killed at close, so that one still waiting for the launcher's
   * acknowledgement does not go on to a `docker exec` after the container's processes were killed.
   */
  private readonly processes = new Set<DockerExecProcess>();
  /**
   * The container's compiled spawner (see container-spawner.ts), opened as soon as the container
   * runs so that the first command does not wait for it; null when it did not start (or the
   * sandbox closed first: commands then go to `docker exec`). Null for a container without one.
   */
  private readonly spawner: Promise<SandboxSpawner | null> | null;

  constructor(
    start: (closeRequested: CloseRequested) => Promise<StartedContainer>,
    /**
     * Ends the sandbox at close: its container's processes at once, the container and the
     * directories later (just the directories when no container started).
     */
    private readonly release: (started: StartedContainer | null) => Promise<void>,
    private readonly settings: SandboxSettings,
    private readonly spec: SandboxSpec,
    private readonly workspace: string,
    privateDir: string,
    private readonly user: { uid: number; gid: number } | null,
    /** Set before the bridge exists (see DockerSandboxBackend.open). */
    readonly apiUrl: string | null,
    /** The container's launcher FIFO (see makePrivateDirs); null: no launcher. */
    launchFifo: string | null = null,
    /** The launcher becomes the compiled spawner (DockerHost.withSpawner). */
    withSpawner = false,
  ) {
    this.launcher =
      launchFifo && user
        ? {
            hostDir: killerDirOf(privateDir),
            insideDir: KILLER_DIR,
            fifo: launchFifo,
            uid: user.uid,
            gid: user.gid,
            track: (command) => {
              this.launched.add(command);
              return () => this.launched.delete(command);
            },
            pausedUntil: 0,
          }
        : null;
    this.privateDir = { host: privateDir, inside: SANDBOX_PRIVATE_DIR };
    this.ready = start(
      Object.assign(() => this.closeRequested, { signal: this.closeAborts.signal }),
    );
    // Whoever needs the container sees the failure; nobody may have to.
    this.ready.catch(() => undefined);
    const launcher = this.launcher;
    this.spawner =
      launcher && withSpawner
        ? this.ready.then(
            () => (this.closeRequested ? null : containerSpawner(launcher.hostDir, launcher.fifo)),
            () => null,
          )
        : null;
  }

  /** Settles once the container is ready for commands (true) or could not be (false). */
  get started(): Promise<boolean> {
    return this.ready.then(
      () => !this.closeRequested,
      () => false,
    );
  }

  spawn(file: string, args: string[], options: SandboxSpawnOptions): SandboxProcess {
    const child = new DockerExecProcess(this.container(), {
      file,
      args,
      cwd: options.cwd ?? SANDBOX_WORKDIR,
      env: options.env,
      stdin: options.stdin === 'pipe',
      user: this.settings.docker.user,
      killGroup: (pgid) => this.killGroup(pgid),
      launcher: this.launcher,
      spawner: this.spawner,
    });
    this.processes.add(child);
    void child.exited.finally(() => this.processes.delete(child));
    return child;
  }

  async limitHit(): Promise<string | null> {
    let output: string;
    try {
      output = await this.run(['/bin/sh', '-c', LIMIT_COUNTERS]);
    } catch (_error) {
      return null;
    }
    let oomKills = this.oomKills;
    let pidsMaxHits = this.pidsMaxHits;
    for (const line of output.split('\n')) {
      const [counter, value] = line.trim().split(/\s+/);
      if (counter === 'memory') oomKills = Number(value);
      if (counter === 'pids') pidsMaxHits = Number(value);
    }
    const oom = oomKills > this.oomKills;
    const pids = pidsMaxHits > this.pidsMaxHits;
    this.oomKills = oomKills;
    this.pidsMaxHits = pidsMaxHits;
    if (oom) return `out of memory: the sandbox's memory limit is ${this.spec.limits.memoryMb} MiB`;
    if (pids) return `process limit reached: the sandbox allows ${this.spec.limits.pids} processes`;
    return null;
  }

  async adopt(hostPath: string): Promise<void> {
    if (!this.user) return;
    const { uid, gid } = this.user;
    const target = resolve(hostPath);
    await chownTree(target, uid, gid);
    for (const root of [this.workspace, this.privateDir.host]) {
      const rel = relative(root, target);
      if (rel === '' || rel.startsWith('..') || rel.startsWith(sep)) continue;
      for (let dir = dirname(target); dir.length >= root.length; dir = dirname(dir)) {
        await lchown(dir, uid, gid);
        if (dir === root) break;
      }
    }
  }

  async commitSnapshot(of: SnapshotImageOf): Promise<number> {
    return commitSnapshotImage(await this.container(), of);
  }

  /**
   * Asked when a command was killed without Ambient killing it. A removal kills the container's
   * processes before the daemon reports the container gone, so a container that still looks
   * alive is looked at again for a moment (LOSS_SETTLE_MS) before the kill counts as the
   * command's own.
   */
  async lost(): Promise<string | null> {
    const deadline = Date.now() + LOSS_SETTLE_MS;
    for (;;) {
      const verdict = await this.lossNow();
      if (verdict !== null || Date.now() >= deadline || this.closeRequested) return verdict;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private async lossNow(): Promise<string | null> {
    const started = await this.ready.catch(() => null);
    if (!started || this.closeRequested) return null;
    // Read first: by the time the daemon answers, a container being removed may be gone.
    const initEnded = started.init !== null && !containerInitAlive(started.init);
    try {
      const { State } = await started.container.inspect();
      const outside = 'its container was stopped or removed outside Ambient';
      if (State.Status === 'removing') return outside;
      if (!State.Running) return `its container stopped (exit code ${State.ExitCode})`;
      // The daemon may not have seen the end of a container killed a moment ago.
      return initEnded ? outside : null;
    } catch (error) {
      if (this.closeRequested) return null;
      if (apiError(error).statusCode === 404) {
        return 'its container no longer exists (removed outside Ambient, or the Docker daemon restarted)';
      }
      if (daemonDown(error)) return `the docker daemon does not answer (${reason(error)})`;
      return null;
    }
  }

  /** Works at any moment: a container still being made is removed once its start settles. */
  close(): Promise<void> {
    this.closeRequested = true;
    this.closeAborts.abort(new Error('the sandbox was closed'));
    for (const child of this.processes) child.kill();
    this.closing ??= (async () => {
      const started = await this.ready.catch(() => null);
      if (started) {
        await Promise.all([...this.launched].map((command) => command.dispose()));
        // Its commands were just killed; the spawner goes with the container's processes.
        if (this.launcher) await forgetContainerSpawner(this.launcher.hostDir, this.launcher.fifo);
        started.proxyForwarder?.stop();
        // The API forwarder stays for the container's return to the pool (see release).
        await started.bridge?.closeSocket();
      }
      await this.release(started);
    })();
    return this.closing;
  }

  /** The running container for a new process; rejects once the sandbox is closed. */
  private async container(): Promise<Dockerode.Container> {
    const { container } = await this.ready;
    if (this.closeRequested) throw new Error('the sandbox is closed');
    return container;
  }

  /** Hands the group to the container's killer; a `docker exec` of kill when it cannot. */
  private async killGroup(pgid: number): Promise<void> {
    if (await tellKiller(this.privateDir.host, String(pgid))) return;
    await this.run(['/bin/sh', '-c', `kill -9 -${pgid}`]).catch(() => undefined);
  }

  /** Runs a command of Ambient's own in the container; its stdout. */
  private async run(cmd: string[]): Promise<string> {
    const container = await this.container();
    const exec = await container.exec({
      Cmd: cmd,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      User: this.settings.docker.user,
    });
    const stream = await exec.start({ hijack: true, stdin: false });
    const chunks: Buffer[] = [];
    const stdout = new PassThrough();
    stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    const sink = new PassThrough();
    sink.resume();
    container.modem.demuxStream(stream, stdout, sink);
    await new Promise<void>((resolveRun, rejectRun) => {
      stream.on('end', resolveRun);
      stream.on('close', resolveRun);
      stream.on('error', rejectRun);
    });
    return Buffer.concat(chunks).toString('utf8');
  }
}
