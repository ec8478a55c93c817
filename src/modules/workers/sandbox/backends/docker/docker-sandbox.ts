import Dockerode from 'dockerode';
import { resolve } from 'node:path';
import { settlesWithin } from '../../../../../common/time';
import type { AppConfig } from '../../../../../config/app-config';
import { bridgedApiUrl } from '../../api-bridge';
import { SandboxError } from '../../sandbox.types';
import type {
  Sandbox,
  SandboxBackend,
  SandboxHandout,
  SandboxPoolMetrics,
  SandboxSpec,
} from '../../sandbox.types';
import { BurstGate } from './burst-gate';
import { ColdContainers } from './cold-containers';
import { killContainerInit } from './container-init';
import { ContainerReturns, type ReturnOutcome } from './container-returns';
import { killAllLine, killerDirOf, tellKiller } from './container-killer';
import { forgetSlots } from './container-launcher';
import { sweepContainers } from './container-sweep';
import { DockerHost } from './docker-host';
import { DockerSandbox, type StartedContainer } from './docker-sandbox-instance';
import { DockerWarmPool } from './docker-warm-pool';
import { currentPoolOwner } from './pool-owner';
import { RemovalQueue } from './removal-queue';
import { privateDirOf, recoverReturningDir, removeDirs, removePoolSlot } from './sandbox-dirs';
import { WarmContainers, type HandedOut, type WarmContainer } from './warm-containers';
import { WarmPoolSizing } from './warm-pool-sizing';

// What other code imports from here (the backend's module).
export { dockerAnswers } from './docker-errors';
export { defaultImageProblem } from './sandbox-image';

type SandboxSettings = AppConfig['sandbox'];

/**
 * How long a shutdown waits for the daemon to remove the pool's and closed sandboxes' containers:
 * one hung daemon request must not hold the process past its grace period.
 */
const DRAIN_WAIT_MS = 30_000;
/**
 * How long a closed sandbox waits for the daemon to kill its container (when neither its killer nor
 * its init could): the removal that follows has its own bound, and a wedged daemon must not hold
 * the close, and the run's end, up.
 */
const DAEMON_KILL_WAIT_MS = 10_000;

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
  private readonly host: DockerHost;
  /** Null without AMBIENT_DOCKER_POOL_SIZE or without a workspace root to put its slots in. */
  readonly pool: DockerWarmPool<WarmContainer> | null = null;
  /** Background work (the pool's refill, removals) yields to a burst of sandboxes. */
  private readonly bursts = new BurstGate();
  /** Containers of closed sandboxes, their processes killed, being removed. */
  private readonly removals = new RemovalQueue(this.bursts);
  private readonly cold: ColdContainers;
  private readonly warmContainers: WarmContainers;
  /** Null when closed sandboxes' containers are all removed (no pool, or AMBIENT_DOCKER_POOL_REUSE off). */
  private readonly returns: ContainerReturns | null = null;
  /** Containers on their way back to the pool (see ContainerReturns.refit): drain waits for them. */
  private readonly returning = new Set<Promise<void>>();
  /** The pool's drain, from the moment a shutdown began (see stopWarming). */
  private poolDrained: Promise<void> | undefined;

  constructor(
    private readonly settings: SandboxSettings,
    docker?: Dockerode,
    /** Names this Ambient deployment: sweep() touches only its own containers. */
    deployment = 'default',
    private readonly options: {
      workspaceRoot?: string;
      metrics?: SandboxPoolMetrics;
      /** How long drain() waits for the daemon (DRAIN_WAIT_MS). */
      drainWaitMs?: number;
    } = {},
  ) {
    this.host = new DockerHost(docker ?? new Dockerode(), settings, deployment);
    this.cold = new ColdContainers(this.host);
    this.warmContainers = new WarmContainers(this.host, this.cold, currentPoolOwner());
    const { poolSize = 0, poolMax = 0 } = settings.docker;
    const { workspaceRoot } = options;
    if (poolSize > 0 && workspaceRoot) {
      this.pool = new DockerWarmPool(
        new WarmPoolSizing({ size: poolSize, max: poolMax }, settings.docker.defaultImage),
        (image) => this.warmContainers.make(image, workspaceRoot),
        (warm) => this.warmContainers.discard(warm),
        (warm) => WarmContainers.alive(warm),
        Date.now,
        this.bursts,
        (warm) => warm.container.id,
      );
      // Nobody has to wait for a pool container; the next attempt says it again.
      this.pool.on('failed', () => undefined);
      if (settings.docker.poolReuse !== false) this.returns = new ContainerReturns(this.host);
    }
  }

  warm(): void {
    this.pool?.start();
  }

  /**
   * A shutdown begins, its runs still ending: the pool makes no more containers and removes its
   * idle ones now, in the background (drain waits for them); a sandbox closed from now on has its
   * container removed, not given back. Sandboxes open keep theirs.
   */
  stopWarming(): void {
    this.poolDrained ??= this.pool?.drain().catch(() => undefined);
  }

  /**
   * Removes the pool's idle containers (stopWarming, unless it began already) and, without further
   * delay, closed sandboxes' ones (those on their way back to the pool too, once there); false
   * when the daemon has not done so within DRAIN_WAIT_MS. What is left keeps its labels: the next
   * sweep removes it.
   */
  async drain(): Promise<boolean> {
    this.stopWarming();
    const drained = await settlesWithin(
      Promise.all([this.poolDrained, this.removals.flush(), ...this.returning]),
      this.options.drainWaitMs ?? DRAIN_WAIT_MS,
    );
    this.returns?.stop();
    return drained;
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
    const user = this.host.user;
    if (user?.uid === 0 || /^root(:|$)/.test(dockerSettings.user)) {
      throw new SandboxError('AMBIENT_DOCKER_USER must not be root', 'resource_unavailable');
    }
    if (spec.egressProxy && !this.host.reachesContainerPids()) {
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
    const bridged = spec.apiUrl && this.host.reachesContainerPids() ? spec.apiUrl : null;

    await recoverReturningDir(workspace);
    // A snapshot image is pooled like any other: its first run is a miss that makes the pool keep
    // one ready (see WarmPoolSizing), the next runs of the environment get it warm.
    const warm = await this.handOut(spec, image, workspace, user);
    const result: SandboxHandout = warm ? 'hit' : this.poolServes() ? 'miss' : 'bypass';
    let sandbox: DockerSandbox;
    if (warm) {
      sandbox = new DockerSandbox(
        (closeRequested) =>
          this.warmContainers.start(warm, spec, image, workspace, bridged, closeRequested),
        (started) => this.releaseWarm(started, warm, image, spec, closed),
        this.settings,
        spec,
        workspace,
        warm.slot.privateDir,
        user,
        bridged ? bridgedApiUrl(bridged) : null,
        warm.slot.launchFifo,
        this.host.withSpawner,
      );
    } else {
      const privateDir = privateDirOf(spec);
      const launchFifo = await this.cold.prepare(image, workspace, privateDir, user);
      sandbox = new DockerSandbox(
        (closeRequested) =>
          this.cold.start(
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
        this.host.withSpawner,
      );
    }
    if (this.pool?.enabled) {
      void sandbox.started.then((ok) => {
        const seconds = (performance.now() - askedAt) / 1000;
        if (ok) this.options.metrics?.handout(result, seconds);
        else this.options.metrics?.handoutFailed?.(result, seconds);
      });
    }
    return sandbox;
  }

  /**
   * The pool serves every network mode: all containers have network none, the egress proxy's
   * forwarder joins at hand-out (docs/DESIGN.md "The sandbox boundary").
   */
  private poolServes(): boolean {
    return Boolean(this.pool?.enabled);
  }

  /** A warm container for the execution (see WarmContainers.handOut); null when none is. */
  private async handOut(
    spec: SandboxSpec,
    image: string,
    workspace: string,
    user: { uid: number; gid: number } | null,
  ): Promise<HandedOut | null> {
    if (!this.pool || !this.poolServes()) return null;
    const comesBack = this.returns !== null;
    return this.warmContainers.handOut(this.pool, spec, image, workspace, user, comesBack);
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
      started?.bridge?.netnsForwarder.stop();
      if (started) await this.stopAndRemove(started, spec);
      else await removeDirs(privateDir).catch(() => undefined);
    } finally {
      closed();
    }
  }

  /**
   * The end of a closed sandbox that was handed a warm container: the container goes back to the
   * pool when ContainerReturns can vacate it (the rest of its return in the background), else it
   * is removed as any other, as it is once the pool stops (a shutdown began: see stopWarming).
   */
  private async releaseWarm(
    started: StartedContainer | null,
    warm: HandedOut,
    image: string,
    spec: SandboxSpec,
    closed: () => void,
  ): Promise<void> {
    const { returns, pool } = this;
    // Its container is removed instead of given back: the pool no longer waits for it.
    const notBack = (): void => {
      if (warm.lent) pool?.settle(image, warm);
    };
    if (
      !started ||
      !returns ||
      !pool ||
      pool.stopping ||
      !ContainerReturns.eligible(started, warm, spec)
    ) {
      notBack();
      return this.release(started, warm.slot.privateDir, spec, closed);
    }
    const vacating = returns
      .vacate(warm, resolve(spec.workspaceDir))
      .catch(() => 'failed' as const);
    // A shutdown's drain waits for it too (then for the rest of the return, tracked below).
    const tracked = vacating.then(() => undefined);
    this.returning.add(tracked);
    const vacated = await vacating.finally(() => this.returning.delete(tracked));
    if (typeof vacated === 'string') {
      notBack();
      this.options.metrics?.returned?.(vacated);
      return this.release(started, warm.slot.privateDir, spec, closed);
    }
    closed();
    const back = returns
      .refit(started, warm, vacated)
      .catch((): ReturnOutcome => 'failed')
      .then(async (refitted): Promise<ReturnOutcome> => {
        if (typeof refitted !== 'string') {
          return (await pool.giveBack(image, refitted)) ? 'reused' : 'pool_full';
        }
        notBack();
        started.bridge?.netnsForwarder.stop();
        warm.forwarder?.stop();
        await this.host.removeContainer(warm.container, warm.init).catch(() => undefined);
        await removePoolSlot(warm.slot);
        return refitted;
      })
      .then((outcome) => this.options.metrics?.returned?.(outcome))
      .finally(() => this.returning.delete(back));
    this.returning.add(back);
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
    const all = killAllLine(container.id);
    if (!(await tellKiller(privateDir, all)) && !(init && killContainerInit(init))) {
      await settlesWithin(
        container.kill().catch(() => undefined),
        DAEMON_KILL_WAIT_MS,
      );
    }
    forgetSlots(killerDirOf(privateDir));
    this.removals.add(async () => {
      await this.host.removeContainer(container, init);
      await removeDirs(privateDir);
    }, Boolean(spec.snapshotImage));
  }

  /** Removes the deployment's containers nobody uses any more (see sweepContainers). */
  sweep(isLive: (runId: string, executionId: number) => Promise<boolean>): Promise<number> {
    return sweepContainers(this.host, isLive);
  }
}
