import Dockerode from 'dockerode';
import { Logger } from '@nestjs/common';
import { NetnsBridge, NetnsForwarder } from './netns-bridge';
import { API_SOCKET_NAME, bridgedApiUrl } from '../../api-bridge';
import { PROXY_SOCKET_NAME, SANDBOX_PROXY_PORT } from '../../../../../common/egress/egress-policy';
import { randomBytes } from 'node:crypto';
import { existsSync, constants as fsConstants } from 'node:fs';
import {
  chown,
  lchown,
  mkdir,
  open as openFile,
  readdir,
  rename,
  rm,
  stat,
} from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { PassThrough } from 'node:stream';
import type { AppConfig } from '../../../../../config/app-config';
import {
  forgetSlots,
  LAUNCHER,
  launcherListens,
  makeFifos,
  prepareSlots,
  type LaunchedCommand,
} from './container-launcher';
import {
  containerInit,
  containerInitAlive,
  killContainerInit,
  type ContainerInit,
} from './container-init';
import { DockerExecProcess, type DockerLauncherTarget } from './docker-exec-process';
import { commitSnapshotImage, SnapshotImageOf } from './docker-snapshot-image';
import { DockerWarmPool } from './docker-warm-pool';
import { currentPoolOwner, poolOwnerIsAlive } from './pool-owner';
import { BurstGate } from './burst-gate';
import { RemovalQueue } from './removal-queue';
import { ColdStartSlots } from './cold-start-slots';
import { WarmPoolSizing } from './warm-pool-sizing';
import {
  SANDBOX_LABELS,
  SANDBOX_PATH,
  SANDBOX_PRIVATE_DIR,
  SANDBOX_WORKDIR,
  SandboxError,
} from '../../sandbox.types';
import type {
  Sandbox,
  SandboxBackend,
  SandboxHandout,
  SandboxLimits,
  SandboxPoolMetrics,
  SandboxProcess,
  SandboxSpawnOptions,
  SandboxSpec,
} from '../../sandbox.types';

type SandboxSettings = AppConfig['sandbox'];

/**
 * The channel to a container's killer: a FIFO in a root-only directory beside the private one,
 * mounted read-only at KILLER_DIR. The container's main process (root, with no capability but
 * CAP_KILL) reads process-group ids from it and kills those groups with the shell's `kill`
 * builtin. It needs no new process to do that, so it still works when a fork bomb has taken every
 * pid of the container's limit — where a `docker exec` cannot even start — and the sandbox's own
 * user can neither open the FIFO nor signal the killer. It never kills group 0 (its own) or 1
 * (every process), nor its own group by number.
 *
 * Should its shell exit anyway, its EXIT trap execs it anew (no new pid needed): the container
 * lives as long as its main process, and a stopped container runs no command at all. The line
 * `all <container>` (KILL_ALL, at the sandbox's close) kills every process of the container but
 * docker-init and the killer itself (`kill -9 -1`): the run's processes and the launcher are gone
 * at once, and the container is left idle for its removal in the background. `<container>` is
 * its hostname (docker's short container id): the killer of a container that replaced this one
 * on the same directories (a crashed process's) ignores it. Arguments:
 * $1 this script; at the container's start only, $2 the launcher's script and $3 the name of its
 * FIFO (made anew with the directories, so a sandbox whose container was replaced under the same
 * name, a crashed process's, can never reach the new one's launcher): the launcher is started in
 * the background when that FIFO is there (see container-launcher.ts).
 */
const KILLER_DIR = '/run/ambient-killer';
const KILL_FIFO = 'kill';
const KILL_ALL = 'all';
/** A container's hostname: the first characters of its id. */
const SHORT_ID_LENGTH = 12;
/** How long a killed command's container may still look alive to the daemon while being removed. */
const LOSS_SETTLE_MS = 3_000;
const KILLER = [
  `if [ -n "$2" ] && [ -p "${KILLER_DIR}/$3" ]; then`,
  `  /bin/sh -c "$2" ambient-launcher ${KILLER_DIR} "$3" "$2" </dev/null >/dev/null 2>&1 &`,
  'fi',
  `exec 3<>${KILLER_DIR}/${KILL_FIFO}`,
  `trap 'exec /bin/sh -c "$1" ambient-killer "$1"' EXIT`,
  'read -r self </etc/hostname',
  'while read -r pgid of <&3; do',
  `  case $pgid in ${KILL_ALL}) [ -n "$self" ] && [ "$of" = "$self" ] && kill -9 -1; continue ;; esac`,
  '  case $pgid in "" | *[!0-9]* | 0 | 1 | "$$") continue ;; esac',
  '  kill -9 "-$pgid" 2>/dev/null',
  'done',
].join('\n');
/** docker-init and the killer (and the launcher): not counted against the sandbox's process limit. */
function ownPids(withLauncher: boolean): number {
  return withLauncher ? 3 : 2;
}

/**
 * What the launcher needs beside KILL: switching to the sandbox user (SETUID, SETGID) and
 * emptying its commands' bounding set (SETPCAP). Only root processes of the container (the killer
 * and the launcher, both Ambient's scripts) ever hold them: the sandbox user's processes start
 * with none, cannot gain any (no-new-privileges) and have an empty bounding set.
 */
const LAUNCHER_CAPS = ['SETUID', 'SETGID', 'SETPCAP'];

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

const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'EACCES',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

interface DockerApiError extends Error {
  statusCode?: number;
  code?: string;
  json?: { message?: string } | null;
}

function apiError(error: unknown): DockerApiError {
  return error instanceof Error ? (error as DockerApiError) : new Error(String(error));
}

/** The daemon's own words when it gave some, else the client's. */
function reason(error: unknown): string {
  const e = apiError(error);
  return (e.json?.message ?? e.message).trim();
}

function daemonDown(error: unknown): boolean {
  const e = apiError(error);
  return (
    e.statusCode === undefined &&
    (CONNECTION_ERRORS.has(e.code ?? '') || /connect|socket hang up/i.test(e.message))
  );
}

function unavailable(error: unknown): SandboxError {
  return new SandboxError(
    `the docker daemon does not answer (${reason(error)}): start it (dockerd), give Ambient access ` +
      'to its socket (DOCKER_HOST), or choose another sandbox with AMBIENT_SANDBOX',
    'resource_unavailable',
  );
}

/** Whether a docker daemon answers within `timeoutMs` (for AMBIENT_SANDBOX=auto). */
export async function dockerAnswers(docker?: Dockerode, timeoutMs = 1000): Promise<boolean> {
  const client = docker ?? new Dockerode();
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    // dockerode passes `abortSignal` on to the request; its typings do not know the option.
    const ping = client.ping.bind(client) as unknown as (options: {
      abortSignal: AbortSignal;
    }) => Promise<unknown>;
    await ping({ abortSignal: abort.signal });
    return true;
  } catch (_error) {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** `uid[:gid]` as numbers, or null for user names (then Ambient cannot chown to them). */
function numericUser(user: string): { uid: number; gid: number } | null {
  const match = /^(\d+)(?::(\d+))?$/.exec(user.trim());
  if (!match) return null;
  const uid = Number(match[1]);
  return { uid, gid: match[2] === undefined ? uid : Number(match[2]) };
}

/**
 * Changes the owner of a tree without following symbolic links, race-free: every directory is
 * opened (`O_NOFOLLOW`) and walked through its descriptor, so a process of the sandbox swapping a
 * directory for a link to a host directory mid-walk cannot make this chown the host's files.
 */
export async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  let dir;
  try {
    dir = await openFile(
      path,
      fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW,
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    // A file or a link: its own owner changes, nothing it points at.
    if (code === 'ENOTDIR' || code === 'ELOOP') return lchownIfPresent(path, uid, gid);
    throw error;
  }
  try {
    await dir.chown(uid, gid);
    const self = `/proc/self/fd/${dir.fd}`;
    const entries = await readdir(self, { withFileTypes: true });
    const files = entries.filter((entry) => !entry.isDirectory());
    await Promise.all(files.map((entry) => lchownIfPresent(`${self}/${entry.name}`, uid, gid)));
    // Directories one at a time: each holds a descriptor while it is walked.
    for (const entry of entries) {
      if (entry.isDirectory()) await chownTree(`${self}/${entry.name}`, uid, gid);
    }
  } finally {
    await dir.close();
  }
}

async function lchownIfPresent(path: string, uid: number, gid: number): Promise<void> {
  try {
    await lchown(path, uid, gid);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function containerName(spec: Pick<SandboxSpec, 'runId' | 'executionId'>): string {
  return `ambient-${spec.runId.replace(/[^a-zA-Z0-9_.-]/g, '_')}-${spec.executionId}`;
}

/** Each execution's private directory: beside the workspace, in `.sandbox/`. */
function privateDirOf(spec: SandboxSpec): string {
  return join(dirname(resolve(spec.workspaceDir)), '.sandbox', containerName(spec));
}

/** The killer's directory (root only), beside the private directory. */
function killerDirOf(privateDir: string): string {
  return `${privateDir}.killer`;
}

/**
 * A warm container's directories, made with it: its private and killer directories (as an
 * execution's) and the directory bound at /workspace, which becomes the run's workspace at
 * hand-out (see moveWorkspaceInto).
 */
interface PoolSlot {
  name: string;
  privateDir: string;
  /** The launcher's FIFO in the killer directory (makePrivateDirs), or null. */
  launchFifo: string | null;
  workspace: string;
}

/** Slots live beside the executions' private directories, on the workspaces' filesystem. */
const POOL_SLOT_PREFIX = 'pool-';

function poolSlotOf(workspaceRoot: string): PoolSlot {
  const name = `ambient-${POOL_SLOT_PREFIX}${randomBytes(8).toString('hex')}`;
  const privateDir = join(resolve(workspaceRoot), '.sandbox', name);
  return { name, privateDir, workspace: `${privateDir}.workspace`, launchFifo: null };
}

/** A pooled container's workspace slot (nothing else: a handed-out slot is a run's workspace). */
async function makePrivateDirs(
  privateDir: string,
  user: { uid: number; gid: number } | null,
  withLauncher: boolean,
): Promise<string | null> {
  await removeDirs(privateDir);
  await mkdir(dirname(privateDir), { recursive: true, mode: 0o711 });
  await mkdir(privateDir, { mode: 0o700 });
  const killerDir = killerDirOf(privateDir);
  await mkdir(killerDir, { mode: 0o700 });
  const launchFifo = withLauncher ? `launch-${randomBytes(8).toString('hex')}` : null;
  const fifos = [KILL_FIFO, ...(launchFifo ? [launchFifo] : [])];
  await makeFifos(fifos.map((f) => join(killerDir, f)));
  // The first commands' FIFOs, so that they do not wait for a mkfifo of their own.
  if (launchFifo) await prepareSlots(killerDir);
  if (user) await chown(privateDir, user.uid, user.gid);
  return launchFifo;
}

async function removePoolSlot(slot: PoolSlot): Promise<void> {
  await removeDirs(slot.privateDir).catch(() => undefined);
  await rm(slot.workspace, { recursive: true, force: true }).catch(() => undefined);
}

function isPoolWorkspaceSlot(path: string): boolean {
  return /\/\.sandbox\/ambient-pool-[0-9a-f]{16}\.workspace$/.test(path);
}

/**
 * Makes the run's workspace the directory a warm container has at /workspace, in place: the
 * workspace's entries are moved into the slot, then the slot is renamed over the (now empty)
 * workspace. Both are renames on one filesystem, so nothing is copied and the container sees the
 * files at once; the workspace keeps its host path. Undone when any step fails (a workspace
 * that is a mount point or on another filesystem cannot be moved: the run gets a new container).
 *
 * Plain fs on a tenant's tree, and still no-follow: `workspace` and `slot` are paths Ambient made,
 * and the entries inside are only listed and renamed — rename(2) moves a symlink itself, never what
 * it points at. It runs at hand-out, before any setup command or agent ran in the container.
 */
async function moveWorkspaceInto(slot: string, workspace: string): Promise<void> {
  const [ws, into, parent] = await Promise.all([
    stat(workspace),
    stat(slot),
    stat(dirname(workspace)),
  ]);
  if (ws.dev !== into.dev || ws.dev !== parent.dev) {
    throw new Error("the workspace is not on the pool's filesystem");
  }
  const names = await readdir(workspace);
  const moved: string[] = [];
  try {
    for (const name of names) {
      await rename(join(workspace, name), join(slot, name));
      moved.push(name);
    }
    await rename(slot, workspace);
  } catch (error) {
    for (const name of moved) {
      await rename(join(slot, name), join(workspace, name)).catch(() => undefined);
    }
    throw error;
  }
}

async function removeDirs(privateDir: string): Promise<void> {
  forgetSlots(killerDirOf(privateDir));
  await rm(privateDir, { recursive: true, force: true });
  await rm(killerDirOf(privateDir), { recursive: true, force: true });
}

function sameLimits(a: SandboxLimits, b: SandboxLimits): boolean {
  return a.memoryMb === b.memoryMb && a.pids === b.pids && a.cpus === b.cpus;
}

/** The memory, pids and CPU limits of a container, as created or as updated at hand-out. */
function resourceLimits(
  limits: SandboxLimits,
  withLauncher: boolean,
): {
  PidsLimit: number;
  Memory: number;
  MemorySwap: number;
  NanoCpus: number;
} {
  const memory = limits.memoryMb * 1024 * 1024;
  return {
    PidsLimit: limits.pids + ownPids(withLauncher),
    Memory: memory,
    MemorySwap: memory,
    NanoCpus: Math.round(limits.cpus * 1e9),
  };
}

function isNotFound(error: unknown): boolean {
  return apiError(error).statusCode === 404;
}

const pullLogger = new Logger('Sandbox');

/** What to do when AMBIENT_DOCKER_IMAGE (the image of environments without one) is not there. */
export function missingImageFix(image: string): string {
  return (
    `image "${image}" is missing: build it with sandbox/agent-image/build-image.sh --tag ${image} ` +
    '(or docker pull it, or set AMBIENT_DOCKER_IMAGE)'
  );
}

/**
 * The start-up check of the default image: what to do when the daemon does not have it, or null
 * (also when the daemon's answer is not a clear "no such image": runs then say what it is).
 */
export async function defaultImageProblem(
  docker: Dockerode,
  image: string,
): Promise<string | null> {
  try {
    await docker.getImage(image).inspect();
    return null;
  } catch (error) {
    return isNotFound(error) ? missingImageFix(image) : null;
  }
}

/**
 * Runs each execution in its own container: the image of the environment (pulled when missing),
 * the sandbox user (never root), no capabilities, no new privileges, memory/pids/CPU limits, no
 * network (`egress` and `allowlist` reach out through the egress proxy's forwarder only), the
 * workspace at /workspace and a private directory
 * at /run/ambient. Processes go through the container's launcher (or are `docker exec`s); closing
 * kills them all and removes the container in the background.
 */
export class DockerSandboxBackend implements SandboxBackend {
  readonly name = 'docker' as const;
  readonly servesEgressProxy = true;
  private readonly docker: Dockerode;
  /** Null without AMBIENT_DOCKER_POOL_SIZE or without a workspace root to put its slots in. */
  readonly pool: DockerWarmPool<WarmContainer> | null = null;
  private readonly poolOwner = currentPoolOwner();
  /** Background work (the pool's refill, removals) yields to a burst of sandboxes. */
  private readonly bursts = new BurstGate();
  /** Containers of closed sandboxes, their processes killed, being removed. */
  private readonly removals = new RemovalQueue(this.bursts);
  /** Containers made for sandboxes the pool did not serve: a few at a time, in order. */
  private readonly coldStarts = new ColdStartSlots();
  /**
   * Whether containers get a command launcher (container-launcher.ts): AMBIENT_DOCKER_LAUNCHER
   * is not off, the user is numeric, the daemon is local (its bind mounts are this host's
   * directories, where the launcher's FIFOs are) and the runtime is runc's (gVisor's file
   * system does not share FIFOs with the host).
   */
  readonly withLauncher: boolean;

  constructor(
    private readonly settings: SandboxSettings,
    docker?: Dockerode,
    /** Names this Ambient deployment: sweep() touches only its own containers. */
    private readonly deployment = 'default',
    private readonly options: { workspaceRoot?: string; metrics?: SandboxPoolMetrics } = {},
  ) {
    this.docker = docker ?? new Dockerode();
    const modem = (this.docker.modem ?? {}) as { host?: string; socketPath?: unknown };
    this.withLauncher =
      settings.docker.launcher !== false &&
      numericUser(settings.docker.user) !== null &&
      !settings.docker.runtime &&
      !modem.host &&
      Boolean(modem.socketPath);
    const { poolSize = 0, poolMax = 0 } = settings.docker;
    const { workspaceRoot } = options;
    if (poolSize > 0 && workspaceRoot) {
      this.pool = new DockerWarmPool(
        new WarmPoolSizing({ size: poolSize, max: poolMax }, settings.docker.defaultImage),
        (image) => this.makeWarm(image, workspaceRoot),
        (warm) => this.discardWarm(warm),
        Date.now,
        this.bursts,
      );
      // Nobody has to wait for a pool container; the next attempt says it again.
      this.pool.on('failed', () => undefined);
    }
  }

  warm(): void {
    this.pool?.start();
  }

  /** Removes the pool's idle containers and, without further delay, closed sandboxes' ones. */
  async drain(): Promise<void> {
    await this.pool?.drain();
    await this.removals.flush();
  }

  /**
   * Returns as soon as the image is there and the directories are prepared: the container is
   * created and started, and the API bridged into it, in the background (the first model request
   * of a run does not need it). Every method of the sandbox that needs the container waits for
   * it; a container that cannot be started makes the sandbox's processes end with a startError
   * that says why.
   */
  async open(spec: SandboxSpec): Promise<Sandbox> {
    // Part of any burst from now until it closes (see BurstGate).
    const closed = this.bursts.opened();
    try {
      return await this.openCounted(spec, closed);
    } catch (error) {
      closed();
      throw error;
    }
  }

  private async openCounted(spec: SandboxSpec, closed: () => void): Promise<Sandbox> {
    const askedAt = performance.now();
    const { docker: dockerSettings } = this.settings;
    const user = numericUser(dockerSettings.user);
    if (user?.uid === 0 || /^root(:|$)/.test(dockerSettings.user)) {
      throw new SandboxError('AMBIENT_DOCKER_USER must not be root', 'resource_unavailable');
    }
    if (spec.egressProxy && !this.reachesContainerPids()) {
      throw new SandboxError(
        `network ${spec.network} needs a local Docker daemon and Ambient running as root (the sandbox reaches the egress proxy through a forwarder in its container's network namespace)`,
        'resource_unavailable',
      );
    }
    const image = spec.snapshotImage ?? spec.image ?? dockerSettings.defaultImage;
    const workspace = resolve(spec.workspaceDir);
    // Known now, bridged once the container runs (see bridgeInto). Should the bridge not start
    // after all (the daemon's processes are not in this host's pid namespace, nsenter or socat
    // missing), nothing listens on that address in the container: the sandbox's processes get
    // "connection refused" from it, which is all they would learn without a bridge anyway.
    const bridged = spec.apiUrl && this.reachesContainerPids() ? spec.apiUrl : null;

    // A snapshot image is pooled like any other: its first run is a miss that makes the pool keep
    // one ready (see WarmPoolSizing), the next runs of the environment get it warm.
    const warm = await this.handOut(spec, image, workspace, user);
    const result: SandboxHandout = warm ? 'hit' : this.poolServes() ? 'miss' : 'bypass';
    let sandbox: DockerSandbox;
    if (warm) {
      sandbox = new DockerSandbox(
        (closeRequested) => this.startWarm(warm, spec, image, workspace, bridged, closeRequested),
        (started) => this.release(started, warm.slot.privateDir, spec, closed),
        this.settings,
        spec,
        workspace,
        warm.slot.privateDir,
        user,
        bridged ? bridgedApiUrl(bridged) : null,
        warm.slot.launchFifo,
      );
    } else {
      const privateDir = privateDirOf(spec);
      const launchFifo = await this.prepareCold(image, workspace, privateDir, user);
      sandbox = new DockerSandbox(
        (closeRequested) =>
          this.startContainer(
            spec,
            image,
            workspace,
            { privateDir, launchFifo },
            bridged,
            closeRequested,
          ),
        (started) => this.release(started, privateDir, spec, closed),
        this.settings,
        spec,
        workspace,
        privateDir,
        user,
        bridged ? bridgedApiUrl(bridged) : null,
        launchFifo,
      );
    }
    if (this.pool?.enabled) {
      void sandbox.started.then((ok) => {
        if (ok) this.options.metrics?.handout(result, (performance.now() - askedAt) / 1000);
      });
    }
    return sandbox;
  }

  /**
   * The pool serves every network mode: all containers have network none, the egress proxy's
   * forwarder joins at hand-out (see DESIGN "Warm container pool").
   */
  private poolServes(): boolean {
    return Boolean(this.pool?.enabled);
  }

  /**
   * A warm container of the image, with the run's workspace now at its /workspace; null when the
   * pool has none ready (never waits) or the workspace cannot be moved there. Its hand-out to the
   * execution (see startWarm) starts as soon as it is taken, beside the workspace's move.
   */
  private async handOut(
    spec: SandboxSpec,
    image: string,
    workspace: string,
    user: { uid: number; gid: number } | null,
  ): Promise<HandedOut | null> {
    if (!this.pool || !this.poolServes()) return null;
    // A container removed behind Ambient's back (docker rm, a daemon restart) is no hit: its init
    // is gone (one read of /proc), or, where Ambient cannot see the init, one inspect says so.
    const warm = this.pool.take(image, (ready) => !ready.init || containerInitAlive(ready.init));
    if (!warm) return null;
    if (!warm.init && !(await containerRuns(warm.container))) {
      void this.discardWarm(warm);
      return null;
    }
    const renamed = warm.container.rename({ name: containerName(spec) }).catch(() => undefined);
    // Made with the server's default limits: most runs (no environment's resources) keep them.
    const updated = sameLimits(spec.limits, warm.limits)
      ? Promise.resolve(true)
      : warm.container.update(resourceLimits(spec.limits, warm.slot.launchFifo !== null)).then(
          () => true,
          () => false,
        );
    try {
      await moveWorkspaceInto(warm.slot.workspace, workspace);
      if (user) await chownTree(workspace, user.uid, user.gid);
      return { ...warm, limited: Promise.all([updated, renamed]).then(([ok]) => ok) };
    } catch (_error) {
      await Promise.all([updated, renamed]);
      await this.discardWarm(warm);
      return null;
    }
  }

  /** The image and the execution's directories of a container made on demand. */
  private async prepareCold(
    image: string,
    workspace: string,
    privateDir: string,
    user: { uid: number; gid: number } | null,
  ): Promise<string | null> {
    const { docker: dockerSettings } = this.settings;
    try {
      await this.ensureImage(image, image === dockerSettings.defaultImage);
    } catch (error) {
      if (error instanceof SandboxError) throw error;
      if (daemonDown(error)) throw unavailable(error);
      throw new SandboxError(
        `cannot prepare the sandbox: ${reason(error)}`,
        'resource_unavailable',
      );
    }
    try {
      const launchFifo = await makePrivateDirs(privateDir, user, this.withLauncher);
      if (user) {
        // The container's user must own what Ambient (root) wrote; symbolic links are not followed.
        await chownTree(workspace, user.uid, user.gid);
      }
      return launchFifo;
    } catch (error) {
      await removeDirs(privateDir).catch(() => undefined);
      throw new SandboxError(
        `cannot prepare the sandbox's directories: ${reason(error)}`,
        'resource_unavailable',
      );
    }
  }

  /**
   * An idle container for the pool: the sandbox's shape with the server's default limits,
   * network none, labelled with this process as its owner (no run yet), its slot's directories
   * bound. Started; rejects (having removed what it made) when it does not run.
   */
  private async makeWarm(image: string, workspaceRoot: string): Promise<WarmContainer> {
    const slot = poolSlotOf(workspaceRoot);
    const user = numericUser(this.settings.docker.user);
    let container: Dockerode.Container | null = null;
    try {
      slot.launchFifo = await makePrivateDirs(slot.privateDir, user, this.withLauncher);
      await mkdir(slot.workspace, { mode: 0o755 });
      if (user) await chown(slot.workspace, user.uid, user.gid);
      const { memoryMb, pids, cpus, maxMemoryMb } = this.settings;
      const limits = { memoryMb, pids, cpus };
      container = await this.docker.createContainer(
        this.containerShape({
          name: slot.name,
          image,
          workspace: slot.workspace,
          privateDir: slot.privateDir,
          launchFifo: slot.launchFifo,
          limits,
          // /tmp's pages count against the memory limit set at hand-out; its size cannot change.
          tmpfsMb: maxMemoryMb,
          labels: { [SANDBOX_LABELS.poolOwner]: this.poolOwner },
        }),
      );
      await container.start();
      const { State } = await container.inspect();
      if (!State.Running) throw new Error(`it exited at once with code ${State.ExitCode}`);
      // The API forwarder listens in its namespace already; the run's bridge socket comes at
      // hand-out (the API address is the run's to give).
      const ours = this.reachesContainerPids();
      const forwarder = ours ? await forwarderInto(State.Pid, slot.privateDir) : null;
      return {
        container,
        pid: State.Pid,
        init: ours ? containerInit(State.Pid) : null,
        limits,
        slot,
        forwarder,
      };
    } catch (error) {
      if (container) await this.removeContainer(container).catch(() => undefined);
      await removePoolSlot(slot);
      throw error;
    }
  }

  private async discardWarm(warm: WarmContainer): Promise<void> {
    warm.forwarder?.stop();
    await this.removeContainer(warm.container).catch(() => undefined);
    await removePoolSlot(warm.slot);
  }

  /**
   * The start of a sandbox handed a warm container: its limits become the run's (docker update)
   * and its name the execution's (both started when it was taken, see handOut), and the API is
   * bridged in over the forwarder it started with; its launcher runs already. Should the warm
   * container be gone after all (the daemon restarted), a container is made for the execution
   * instead, on the same directories.
   */
  private async startWarm(
    warm: HandedOut,
    spec: SandboxSpec,
    image: string,
    workspace: string,
    apiUrl: string | null,
    closeRequested: () => boolean,
  ): Promise<StartedContainer> {
    // All at once: none depends on another, and commands wait for all of them. Named like an
    // execution's own container (`docker ps` says whose it is); labels cannot change, so the run
    // is not among them. bridgeInto never rejects; `limited` says whether the update was made.
    if (!apiUrl) warm.forwarder?.stop();
    const bridging = apiUrl
      ? bridgeInto(warm.pid, warm.slot.privateDir, apiUrl, warm.forwarder)
      : Promise.resolve(null);
    const proxying = proxyInto(warm.pid, warm.slot.privateDir, spec).then(
      (forwarder) => ({ forwarder }),
      (error: unknown) => ({ error }),
    );
    if (!(await warm.limited)) {
      await (await bridging)?.close();
      const proxied = await proxying;
      if ('forwarder' in proxied) proxied.forwarder?.stop();
      await this.removeContainer(warm.container).catch(() => undefined);
      return this.startContainer(spec, image, workspace, warm.slot, apiUrl, closeRequested);
    }
    const [bridge, proxied] = await Promise.all([bridging, proxying]);
    if ('error' in proxied) {
      await bridge?.close();
      await this.removeContainer(warm.container).catch(() => undefined);
      throw new Error(`the sandbox's container could not be started: ${reason(proxied.error)}`);
    }
    // Closed meanwhile: close() removes the container and this bridge once this settles.
    return {
      container: warm.container,
      bridge,
      proxyForwarder: proxied.forwarder,
      init: warm.init,
      privateDir: warm.slot.privateDir,
    };
  }

  /**
   * Whether a container's pid is one of this host's and this process may enter (nsenter: the
   * API bridge) and signal it (a closed sandbox's kill): it is root and the daemon is local (a
   * Unix socket).
   */
  private reachesContainerPids(): boolean {
    const modem = (this.docker.modem ?? {}) as { host?: string; socketPath?: unknown };
    return process.getuid?.() === 0 && !modem.host && Boolean(modem.socketPath);
  }

  /**
   * Creates and starts the container of `open`, then bridges the API into it (null when the
   * bridge does not start). Rejects with a message saying why the container could not be
   * started, having removed whatever it made; stops early once the sandbox is being closed.
   */
  private async startContainer(
    spec: SandboxSpec,
    image: string,
    workspace: string,
    dirs: { privateDir: string; launchFifo: string | null },
    apiUrl: string | null,
    closeRequested: () => boolean,
  ): Promise<StartedContainer> {
    const { privateDir, launchFifo } = dirs;
    const closed = (): Error => new Error('the sandbox was closed before its container started');
    const name = containerName(spec);
    let container: Dockerode.Container | null = null;
    const releaseSlot = await this.coldStarts.acquire();
    try {
      if (closeRequested()) throw closed();
      // A container a crashed process left under this name.
      await this.removeContainer(this.docker.getContainer(name));
      if (closeRequested()) throw closed();
      const options = this.containerOptions(spec, image, name, workspace, privateDir, launchFifo);
      container = await this.docker.createContainer(options).catch(async (error: unknown) => {
        // 409: one of that name appeared meanwhile (another open of the same execution).
        if (apiError(error).statusCode !== 409) throw error;
        await this.removeContainer(this.docker.getContainer(name));
        return this.docker.createContainer(options);
      });
      if (closeRequested()) throw closed();
      await container.start();
      const { State } = await container.inspect();
      if (!State.Running) {
        const hint = State.ExitCode === 127 ? ' (does the image have /bin/sh?)' : '';
        throw new Error(`it exited at once with code ${State.ExitCode}${hint}`);
      }
      releaseSlot();
      const [bridge, proxyForwarder] = await Promise.all([
        apiUrl ? bridgeInto(State.Pid, privateDir, apiUrl) : null,
        proxyInto(State.Pid, privateDir, spec),
        launchFifo ? launcherStarted(killerDirOf(privateDir), launchFifo) : null,
      ]);
      const init = this.reachesContainerPids() ? containerInit(State.Pid) : null;
      return { container, bridge, proxyForwarder, init, privateDir };
    } catch (error) {
      releaseSlot();
      if (container) await this.removeContainer(container).catch(() => undefined);
      if (closeRequested()) throw closed();
      const why = daemonDown(error)
        ? `the docker daemon does not answer (${reason(error)})`
        : reason(error);
      throw new Error(`the sandbox's container (image "${image}") could not be started: ${why}`);
    }
  }

  private containerOptions(
    spec: SandboxSpec,
    image: string,
    name: string,
    workspace: string,
    privateDir: string,
    launchFifo: string | null,
  ): Dockerode.ContainerCreateOptions {
    return this.containerShape({
      name,
      image,
      workspace,
      privateDir,
      launchFifo,
      limits: spec.limits,
      tmpfsMb: spec.limits.memoryMb,
      labels: {
        [SANDBOX_LABELS.run]: spec.runId,
        [SANDBOX_LABELS.execution]: String(spec.executionId),
        [SANDBOX_LABELS.team]: spec.teamId,
      },
    });
  }

  private containerShape(shape: {
    name: string;
    image: string;
    workspace: string;
    privateDir: string;
    launchFifo: string | null;
    limits: SandboxLimits;
    tmpfsMb: number;
    labels: Record<string, string>;
  }): Dockerode.ContainerCreateOptions {
    const { docker: dockerSettings } = this.settings;
    return {
      name: shape.name,
      Image: shape.image,
      // The killer (see KILLER) is the container's main process, the launcher its sibling;
      // docker-init reaps whatever the commands leave behind.
      Entrypoint: [
        '/bin/sh',
        '-c',
        KILLER,
        'ambient-killer',
        KILLER,
        ...(shape.launchFifo ? [LAUNCHER, shape.launchFifo] : []),
      ],
      Cmd: [],
      User: '0:0',
      WorkingDir: SANDBOX_WORKDIR,
      Env: [`PATH=${SANDBOX_PATH}`],
      Labels: {
        [SANDBOX_LABELS.managed]: '1',
        [SANDBOX_LABELS.deployment]: this.deployment,
        ...shape.labels,
      },
      HostConfig: {
        Init: true,
        Binds: [
          `${shape.workspace}:${SANDBOX_WORKDIR}:rw`,
          `${shape.privateDir}:${SANDBOX_PRIVATE_DIR}:ro`,
          `${killerDirOf(shape.privateDir)}:${KILLER_DIR}:ro`,
        ],
        CapDrop: ['ALL'],
        CapAdd: ['KILL', ...(shape.launchFifo ? LAUNCHER_CAPS : [])],
        SecurityOpt: ['no-new-privileges'],
        ...resourceLimits(shape.limits, shape.launchFifo !== null),
        // Every network mode: the only way out is the egress proxy's forwarder (see proxyInto).
        NetworkMode: 'none',
        ...(dockerSettings.runtime ? { Runtime: dockerSettings.runtime } : {}),
        // The root filesystem stays writable: vendor CLIs write their state under HOME, which
        // the image's user owns. It is the container's own layer, gone at close.
        Tmpfs: { '/tmp': `rw,nosuid,nodev,mode=1777,size=${shape.tmpfsMb}m` },
        LogConfig: { Type: 'none', Config: {} },
        RestartPolicy: { Name: 'no' },
      },
    };
  }

  /**
   * The end of a closed sandbox: its container's (stopAndRemove), or just its directories when no
   * container started; then it no longer counts towards a burst.
   */
  private async release(
    started: StartedContainer | null,
    privateDir: string,
    spec: SandboxSpec,
    closed: () => void,
  ): Promise<void> {
    try {
      if (started) await this.stopAndRemove(started, spec);
      else await removeDirs(privateDir).catch(() => undefined);
    } finally {
      closed();
    }
  }

  /**
   * A closed sandbox's container: its processes are killed now (by its killer; else from this
   * host when its init is one of our processes; else by the daemon); the container, then its
   * directories, are removed in the background (see RemovalQueue), at once for an environment
   * snapshot's image, which may be waiting to be removed itself (a newer snapshot replaced it). A
   * container the daemon cannot stop or remove now is the sweep's, with its directories.
   */
  private async stopAndRemove(
    { container, init, privateDir }: StartedContainer,
    spec: SandboxSpec,
  ): Promise<void> {
    const all = `${KILL_ALL} ${container.id.slice(0, SHORT_ID_LENGTH)}`;
    if (!(await tellKiller(privateDir, all)) && !(init && killContainerInit(init))) {
      await container.kill().catch(() => undefined);
    }
    forgetSlots(killerDirOf(privateDir));
    this.removals.add(async () => {
      await this.removeContainer(container);
      await removeDirs(privateDir);
    }, Boolean(spec.snapshotImage));
  }

  async sweep(isLive: (runId: string, executionId: number) => Promise<boolean>): Promise<number> {
    let containers: Dockerode.ContainerInfo[];
    try {
      containers = await this.docker.listContainers({
        all: true,
        filters: {
          label: [`${SANDBOX_LABELS.managed}=1`, `${SANDBOX_LABELS.deployment}=${this.deployment}`],
        },
      });
    } catch (error) {
      if (daemonDown(error)) throw unavailable(error);
      throw error;
    }
    let removed = 0;
    for (const info of containers) {
      // Empty in containers of a snapshot image (see docker-snapshot-image.ts): not pooled.
      const owner = info.Labels[SANDBOX_LABELS.poolOwner];
      if (owner) {
        // Pooled: idle or handed out, it lives as long as the process that made it.
        if (poolOwnerIsAlive(owner)) continue;
        await this.removeContainer(this.docker.getContainer(info.Id));
        for (const mount of info.Mounts) {
          if (mount.Destination === SANDBOX_PRIVATE_DIR && mount.Source) {
            await removeDirs(mount.Source);
          }
          // A slot never handed out; a handed-out one is a run's workspace now, elsewhere.
          if (mount.Destination === SANDBOX_WORKDIR && isPoolWorkspaceSlot(mount.Source)) {
            await rm(mount.Source, { recursive: true, force: true });
          }
        }
        removed++;
        continue;
      }
      const runId = info.Labels[SANDBOX_LABELS.run];
      const executionId = Number(info.Labels[SANDBOX_LABELS.execution]);
      if (runId && Number.isInteger(executionId) && (await isLive(runId, executionId))) continue;
      await this.removeContainer(this.docker.getContainer(info.Id));
      const privateMount = info.Mounts.find((m) => m.Destination === SANDBOX_PRIVATE_DIR);
      if (privateMount?.Source) await removeDirs(privateMount.Source);
      removed++;
    }
    return removed;
  }

  /** A default image that cannot be pulled is the operator's to build (the shipped one is local). */
  private async ensureImage(image: string, isDefault: boolean): Promise<void> {
    try {
      await this.docker.getImage(image).inspect();
      return;
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    try {
      const stream = await this.docker.pull(image);
      await new Promise<void>((resolvePull, rejectPull) =>
        this.docker.modem.followProgress(stream, (error: Error | null) =>
          error ? rejectPull(error) : resolvePull(),
        ),
      );
      await this.docker.getImage(image).inspect();
    } catch (error) {
      if (daemonDown(error)) throw unavailable(error);
      if (isDefault) throw new SandboxError(missingImageFix(image), 'environment_setup_failed');
      // The daemon's answer may hold what it reached (a registry's, or any port's, first bytes):
      // for the operator's log only.
      pullLogger.warn(`pulling image ${JSON.stringify(image)} failed: ${reason(error)}`);
      throw new SandboxError(
        `the image "${image}" could not be pulled`,
        'environment_setup_failed',
      );
    }
  }

  /** Removes a container with everything running in it; nothing when it is already gone. */
  private async removeContainer(container: Dockerode.Container): Promise<void> {
    try {
      await container.remove({ force: true, v: true });
    } catch (error) {
      const e = apiError(error);
      // 404: gone; 409: its removal is already in progress.
      if (e.statusCode === 404 || (e.statusCode === 409 && /in progress/i.test(reason(e)))) return;
      throw error;
    }
  }
}

interface StartedContainer {
  container: Dockerode.Container;
  bridge: NetnsBridge | null;
  /** The egress proxy's forwarder in its network namespace (null: network none). */
  proxyForwarder: NetnsForwarder | null;
  /** Its private directory on the host (with the killer's beside it). */
  privateDir: string;
  /** Its init as a process of this host (null: the daemon is not local, or this is not root). */
  init: ContainerInit | null;
}

/** A warm container taken for an execution: its limits and name, being set (true once set). */
interface HandedOut extends WarmContainer {
  limited: Promise<boolean>;
}

/** A warm pool's container: started, idle, not yet any run's. */
interface WarmContainer {
  container: Dockerode.Container;
  pid: number;
  init: ContainerInit | null;
  /** The limits it was made with (the server's defaults). */
  limits: SandboxLimits;
  slot: PoolSlot;
  /** The API forwarder started with it (null: none could be, or none is wanted). */
  forwarder: NetnsForwarder | null;
}

class DockerSandbox implements Sandbox {
  readonly backend = 'docker' as const;
  readonly workdir = SANDBOX_WORKDIR;
  readonly path = SANDBOX_PATH;
  readonly privateDir: { host: string; inside: string };
  /** The container, running, with the API bridged into it; rejects saying why it is not. */
  private readonly ready: Promise<StartedContainer>;
  private closeRequested = false;
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

  constructor(
    start: (closeRequested: () => boolean) => Promise<StartedContainer>,
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
    this.ready = start(() => this.closeRequested);
    // Whoever needs the container sees the failure; nobody may have to.
    this.ready.catch(() => undefined);
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
    for (const child of this.processes) child.kill();
    this.closing ??= (async () => {
      const started = await this.ready.catch(() => null);
      if (started) {
        await Promise.all([...this.launched].map((command) => command.dispose()));
        started.proxyForwarder?.stop();
        await started.bridge?.close();
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

/**
 * The Ambient API inside the container (see ApiBridge): the bridge socket in the private
 * directory, and socat of this host listening on 127.0.0.1:7171 in the network namespace of the
 * container's process `pid` (entered by pid; needs a local daemon and root). Null when it cannot
 * be started.
 */
async function bridgeInto(
  pid: number,
  privateDir: string,
  apiUrl: string,
  forwarder: NetnsForwarder | null = null,
): Promise<NetnsBridge | null> {
  try {
    const socketPath = join(privateDir, API_SOCKET_NAME);
    if (forwarder) return await NetnsBridge.over(forwarder, socketPath, apiUrl);
    if (!pid || !existsSync(`/proc/${pid}/ns/net`)) return null;
    return await NetnsBridge.start(pid, socketPath, apiUrl);
  } catch (_error) {
    return null;
  }
}

/**
 * The execution's egress proxy inside the container: served on the socket in the private
 * directory, and socat of this host listening on 127.0.0.1:7172 in the container's network
 * namespace. Null for network none; rejects when it cannot be started (the container must not
 * run without it: it would have no way out at all, and look broken rather than refused).
 */
async function proxyInto(
  pid: number,
  privateDir: string,
  spec: SandboxSpec,
): Promise<NetnsForwarder | null> {
  if (!spec.egressProxy) return null;
  const socketPath = join(privateDir, PROXY_SOCKET_NAME);
  await spec.egressProxy.listen(socketPath);
  return NetnsForwarder.start(pid, socketPath, SANDBOX_PROXY_PORT);
}

/** The API forwarder of a warm container (see NetnsForwarder); null when it cannot start. */
async function forwarderInto(pid: number, privateDir: string): Promise<NetnsForwarder | null> {
  try {
    if (!pid || !existsSync(`/proc/${pid}/ns/net`)) return null;
    return await NetnsForwarder.start(pid, join(privateDir, API_SOCKET_NAME));
  } catch (_error) {
    return null;
  }
}

/** Whether the container runs (one inspect); false when it is gone or the daemon does not say. */
async function containerRuns(container: Dockerode.Container): Promise<boolean> {
  try {
    return (await container.inspect()).State.Running;
  } catch (_error) {
    return false;
  }
}

/** Writes a line to the container's killer (see KILLER); false when none reads its FIFO. */
async function tellKiller(privateDir: string, word: string): Promise<boolean> {
  try {
    const fifo = await openFile(
      join(killerDirOf(privateDir), KILL_FIFO),
      fsConstants.O_WRONLY | fsConstants.O_NONBLOCK,
    );
    try {
      await fifo.write(`${word}\n`);
      return true;
    } finally {
      await fifo.close();
    }
  } catch (_error) {
    return false;
  }
}

/**
 * Waits (3 s at most: a loaded host) for a fresh container's launcher to read its FIFO, so the
 * first commands do not go to `docker exec` for want of it. Pooled containers have theirs long
 * before. Should it never come (an image without setpriv), commands use `docker exec`.
 */
async function launcherStarted(killerDir: string, fifo: string): Promise<void> {
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline) {
    if (await launcherListens(join(killerDir, fifo))) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}
