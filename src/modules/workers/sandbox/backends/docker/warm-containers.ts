import type Dockerode from 'dockerode';
import { chown, mkdir } from 'node:fs/promises';
import { SANDBOX_LABELS, type SandboxLimits, type SandboxSpec } from '../../sandbox.types';
import { chownTree } from './chown-tree';
import type { ColdContainers } from './cold-containers';
import { containerInit, containerInitAlive, type ContainerInit } from './container-init';
import { snapshotLayer, type LayerSnapshot } from './container-layer';
import { bridgeInto, containerRuns, forwarderInto, proxyInto } from './container-plumbing';
import { ContainerReturns } from './container-returns';
import { resourceLimits, sameLimits } from './container-shape';
import { reason } from './docker-errors';
import type { DockerHost } from './docker-host';
import type { StartedContainer } from './docker-sandbox-instance';
import type { DockerWarmPool } from './docker-warm-pool';
import type { NetnsForwarder } from './netns-bridge';
import {
  containerName,
  dirIdentity,
  type DirIdentity,
  makePrivateDirs,
  moveWorkspaceInto,
  type PoolSlot,
  poolSlotOf,
  removePoolSlot,
} from './sandbox-dirs';

/** A warm pool's container: started, idle, not yet any run's. */
export interface WarmContainer {
  container: Dockerode.Container;
  pid: number;
  init: ContainerInit | null;
  /** The limits it was made with (the server's defaults). */
  limits: SandboxLimits;
  slot: PoolSlot;
  /** The API forwarder started with it (null: none could be, or none is wanted). */
  forwarder: NetnsForwarder | null;
  /**
   * Its writable layer on this host as it started (see container-layer.ts); null where Ambient
   * cannot read it (then it never goes back to the pool).
   */
  layer: { upperDir: string; snapshot: LayerSnapshot } | null;
}

/** A warm container taken for an execution: its limits and name, being set (true once set). */
export interface HandedOut extends WarmContainer {
  limited: Promise<boolean>;
  /** The directory bound at its /workspace, now the run's workspace (see moveWorkspaceOut). */
  bound: DirIdentity;
  /** Its limits once `limited`: the run's. */
  runLimits: SandboxLimits;
  /** Taken to come back to the pool (see DockerWarmPool.take): given back, or settled. */
  lent: boolean;
}

/**
 * The containers of the warm pool (DockerWarmPool keeps them): made idle with the server's
 * default limits, handed to an execution with its workspace moved in, or discarded.
 */
export class WarmContainers {
  constructor(
    private readonly host: DockerHost,
    /** Makes an execution's container when its warm one turns out to be gone at hand-out. */
    private readonly cold: ColdContainers,
    /** The label of the containers this process made (see pool-owner.ts). */
    private readonly poolOwner: string,
  ) {}

  /**
   * An idle container for the pool: the sandbox's shape with the server's default limits,
   * network none, labelled with this process as its owner (no run yet), its slot's directories
   * bound. Started; rejects (having removed what it made) when it does not run.
   */
  async make(image: string, workspaceRoot: string): Promise<WarmContainer> {
    const { settings } = this.host;
    const slot = poolSlotOf(workspaceRoot);
    const user = this.host.user;
    let container: Dockerode.Container | null = null;
    try {
      slot.launchFifo = await makePrivateDirs(
        slot.privateDir,
        user,
        this.host.withLauncher,
        this.host.withSpawner,
      );
      await mkdir(slot.workspace, { mode: 0o755 });
      if (user) await chown(slot.workspace, user.uid, user.gid);
      const { memoryMb, pids, cpus, maxMemoryMb } = settings;
      const limits = { memoryMb, pids, cpus };
      container = await this.host.docker.createContainer(
        await this.host.shape({
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
      const { State, GraphDriver } = await container.inspect();
      if (!State.Running) throw new Error(`it exited at once with code ${State.ExitCode}`);
      const ours = this.host.reachesContainerPids();
      // Read before anything else waits: an init read later, once the container is gone, would be
      // unknown, and an unknown init counts as alive (see `alive`).
      const init = ours ? containerInit(State.Pid) : null;
      if (ours && !init) throw new Error('it exited at once');
      // The API forwarder listens in its namespace already; the run's bridge socket comes at
      // hand-out (the API address is the run's to give).
      const forwarder = ours ? await forwarderInto(State.Pid, slot.privateDir) : null;
      return {
        container,
        pid: State.Pid,
        init,
        limits,
        slot,
        forwarder,
        layer: await layerOf(GraphDriver, ours),
      };
    } catch (error) {
      if (container) await this.host.removeContainer(container).catch(() => undefined);
      await removePoolSlot(slot);
      throw error;
    }
  }

  /**
   * Whether a warm container still runs, as far as one read of /proc says: its init is gone once
   * it was removed. True where Ambient cannot see the init (hand-out then inspects it).
   */
  static alive(warm: WarmContainer): boolean {
    return !warm.init || containerInitAlive(warm.init);
  }

  async discard(warm: WarmContainer): Promise<void> {
    warm.forwarder?.stop();
    await this.host.removeContainer(warm.container, warm.init).catch(() => undefined);
    await removePoolSlot(warm.slot);
  }

  /**
   * A warm container of the image, with the run's workspace now at its /workspace; null when the
   * pool has none ready (never waits) or the workspace cannot be moved there. Its hand-out to the
   * execution (see start) starts as soon as it is taken, beside the workspace's move.
   */
  async handOut(
    pool: DockerWarmPool<WarmContainer>,
    spec: SandboxSpec,
    image: string,
    workspace: string,
    user: { uid: number; gid: number } | null,
    /** Closed sandboxes' containers go back to the pool where they may (see container-returns.ts). */
    comesBack = false,
  ): Promise<HandedOut | null> {
    // A container removed behind Ambient's back (docker rm, a daemon restart) is no hit: the pool
    // asks `alive`, or, where Ambient cannot see the init, one inspect says so.
    const lends = (item: WarmContainer): boolean =>
      comesBack && ContainerReturns.returnable(item, spec);
    const warm = pool.take(image, lends);
    if (!warm) return null;
    const lent = lends(warm);
    const notBack = (): void => {
      if (lent) pool.settle(image, warm);
    };
    if (!warm.init && !(await containerRuns(warm.container))) {
      void this.discard(warm);
      notBack();
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
      const bound = await dirIdentity(warm.slot.workspace);
      await moveWorkspaceInto(warm.slot.workspace, workspace);
      if (user) await chownTree(workspace, user.uid, user.gid);
      const limited = Promise.all([updated, renamed]).then(([ok]) => ok);
      return { ...warm, limited, bound, runLimits: spec.limits, lent };
    } catch (_error) {
      await Promise.all([updated, renamed]);
      await this.discard(warm);
      notBack();
      return null;
    }
  }

  /**
   * The start of a sandbox handed a warm container: its limits become the run's (docker update)
   * and its name the execution's (both started when it was taken, see handOut), and the API is
   * bridged in over the forwarder it started with; its launcher runs already. Should the warm
   * container be gone after all (the daemon restarted), a container is made for the execution
   * instead, on the same directories.
   */
  async start(
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
      await this.host.removeContainer(warm.container, warm.init).catch(() => undefined);
      return this.cold.start(spec, image, workspace, warm.slot, apiUrl, closeRequested);
    }
    const [bridge, proxied] = await Promise.all([bridging, proxying]);
    if ('error' in proxied) {
      await bridge?.close();
      await this.host.removeContainer(warm.container, warm.init).catch(() => undefined);
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
}

/** A started container's writable layer and its snapshot (overlay2 on a local daemon only). */
async function layerOf(
  driver: Dockerode.ContainerInspectInfo['GraphDriver'],
  local: boolean,
): Promise<WarmContainer['layer']> {
  // dockerode's type has devicemapper's fields; overlay2 gives its directories.
  const data = driver?.Data as { UpperDir?: unknown } | undefined;
  const upperDir = driver?.Name === 'overlay2' ? data?.UpperDir : undefined;
  if (!local || typeof upperDir !== 'string') return null;
  const snapshot = await snapshotLayer(upperDir);
  return snapshot ? { upperDir, snapshot } : null;
}
