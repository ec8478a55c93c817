import type Dockerode from 'dockerode';
import { settlesWithin } from '../../../../../common/time';
import { SANDBOX_LABELS, SandboxError, type SandboxSpec } from '../../sandbox.types';
import { chownTree } from './chown-tree';
import { ColdStartSlots } from './cold-start-slots';
import { containerInit } from './container-init';
import { killerDirOf } from './container-killer';
import { bridgeInto, launcherStarted, proxyInto } from './container-plumbing';
import { apiError, daemonDown, reason, unavailable } from './docker-errors';
import type { DockerHost } from './docker-host';
import type { CloseRequested, StartedContainer } from './docker-sandbox-instance';
import { ensureImage } from './sandbox-image';
import { containerName, makePrivateDirs, removeDirs } from './sandbox-dirs';

/**
 * How long a cold start may hold its slot (see ColdStartSlots) for the daemon's answers: the
 * removal of a container left under its name, the create options, the create, the start and the
 * inspect. A daemon that answers takes seconds for them even in a burst; one that does not (wedged)
 * would otherwise keep every slot, and every later cold start waiting, for good. Generous, as a
 * removal's bound is (RemovalQueue): a start given up on fails its sandbox, and a container it
 * makes later is removed.
 */
export const COLD_START_TIMEOUT_MS = 120_000;

/** Why a start stopped: its sandbox is being closed. */
const closed = (): Error => new Error('the sandbox was closed before its container started');

/** An execution's directories on the host: its private one and its launcher's FIFO (or none). */
export interface ExecutionDirs {
  privateDir: string;
  launchFifo: string | null;
}

/**
 * Containers made on demand for the sandboxes the warm pool did not serve: the image pulled when
 * missing, the execution's directories made, then the container created and started a few at a
 * time, in order (see ColdStartSlots).
 */
export class ColdContainers {
  /** Containers made for sandboxes the pool did not serve: a few at a time, in order. */
  private readonly coldStarts = new ColdStartSlots();

  constructor(
    private readonly host: DockerHost,
    /** How long the daemon has to make and start a container (COLD_START_TIMEOUT_MS). */
    private readonly timeoutMs = COLD_START_TIMEOUT_MS,
  ) {}

  /** The image and the execution's directories of a container made on demand. */
  async prepare(
    image: string,
    workspace: string,
    privateDir: string,
    user: { uid: number; gid: number } | null,
  ): Promise<string | null> {
    const { docker: dockerSettings } = this.host.settings;
    try {
      await ensureImage(this.host.docker, image, image === dockerSettings.defaultImage);
    } catch (error) {
      if (error instanceof SandboxError) throw error;
      if (daemonDown(error)) throw unavailable(error);
      throw new SandboxError(
        `cannot prepare the sandbox: ${reason(error)}`,
        'resource_unavailable',
      );
    }
    try {
      const launchFifo = await makePrivateDirs(
        privateDir,
        user,
        this.host.withLauncher,
        this.host.withSpawner,
      );
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
   * Creates and starts the container of `open`, then bridges the API into it (null when the
   * bridge does not start). Rejects with a message saying why the container could not be
   * started, having removed whatever it made; stops early once the sandbox is being closed (at
   * once while it waits for a slot, when `closeRequested` has a signal). The daemon has
   * COLD_START_TIMEOUT_MS to make and start the container: past that the slot is freed and the
   * start fails, and a container the daemon makes after all is removed.
   */
  async start(
    spec: SandboxSpec,
    image: string,
    workspace: string,
    dirs: ExecutionDirs,
    apiUrl: string | null,
    closeRequested: CloseRequested,
  ): Promise<StartedContainer> {
    const { privateDir, launchFifo } = dirs;
    const releaseSlot = await this.coldStarts
      .acquire(closeRequested.signal)
      .catch((error: unknown) => {
        throw closeRequested() ? closed() : error;
      });
    const attempt: ColdAttempt = { container: null, abandoned: false };
    try {
      const running = this.run(spec, image, workspace, dirs, closeRequested, attempt);
      if (!(await settlesWithin(running, this.timeoutMs))) {
        attempt.abandoned = true;
        throw new Error(`the docker daemon did not answer within ${this.timeoutMs / 1000} s`);
      }
      const { container, State } = await running;
      releaseSlot();
      const [bridge, proxyForwarder] = await Promise.all([
        apiUrl ? bridgeInto(State.Pid, privateDir, apiUrl) : null,
        proxyInto(State.Pid, privateDir, spec),
        launchFifo ? launcherStarted(killerDirOf(privateDir), launchFifo) : null,
      ]);
      const init = this.host.reachesContainerPids() ? containerInit(State.Pid) : null;
      return { container, bridge, proxyForwarder, init, privateDir };
    } catch (error) {
      releaseSlot();
      if (attempt.container) {
        const removing = this.remove(attempt.container);
        // A daemon that did not answer in time is not waited for again.
        if (!attempt.abandoned) await removing;
      }
      if (closeRequested()) throw closed();
      const why = daemonDown(error)
        ? `the docker daemon does not answer (${reason(error)})`
        : reason(error);
      throw new Error(`the sandbox's container (image "${image}") could not be started: ${why}`);
    }
  }

  /**
   * The daemon's part of a start, made while holding a slot: the container created and started,
   * running. The container is in `attempt` as soon as it exists; one created once the attempt was
   * given up on (`abandoned`) is removed at once.
   */
  private async run(
    spec: SandboxSpec,
    image: string,
    workspace: string,
    dirs: ExecutionDirs,
    closeRequested: () => boolean,
    attempt: ColdAttempt,
  ): Promise<{ container: Dockerode.Container; State: Dockerode.ContainerInspectInfo['State'] }> {
    const { docker } = this.host;
    const name = containerName(spec);
    // Once given up on, it touches nothing by this name: another open of the execution may own it.
    const goOn = (): void => {
      if (attempt.abandoned) throw new Error('the start was given up on');
      if (closeRequested()) throw closed();
    };
    goOn();
    // A container a crashed process left under this name.
    await this.host.removeContainer(docker.getContainer(name));
    goOn();
    const options = await this.containerOptions(spec, image, name, workspace, dirs);
    goOn();
    const container = await docker.createContainer(options).catch(async (error: unknown) => {
      // 409: one of that name appeared meanwhile (another open of the same execution).
      if (apiError(error).statusCode !== 409) throw error;
      goOn();
      await this.host.removeContainer(docker.getContainer(name));
      goOn();
      return docker.createContainer(options);
    });
    if (attempt.abandoned) {
      void this.remove(container);
      throw new Error('the start was given up on before its container was created');
    }
    attempt.container = container;
    goOn();
    await container.start();
    const { State } = await container.inspect();
    if (!State.Running) {
      const hint = State.ExitCode === 127 ? ' (does the image have /bin/sh?)' : '';
      throw new Error(`it exited at once with code ${State.ExitCode}${hint}`);
    }
    return { container, State };
  }

  /**
   * Removes a container a start made and does not hand over. Given the daemon's time as a start
   * is (a wedged daemon must not hold the sandbox's open or close up): past that, the container
   * keeps its labels and the sweep removes it.
   */
  private async remove(container: Dockerode.Container): Promise<void> {
    await settlesWithin(
      this.host.removeContainer(container).catch(() => undefined),
      this.timeoutMs,
    );
  }

  private containerOptions(
    spec: SandboxSpec,
    image: string,
    name: string,
    workspace: string,
    { privateDir, launchFifo }: ExecutionDirs,
  ): Promise<Dockerode.ContainerCreateOptions> {
    return this.host.shape({
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
}

/** A cold start's container, once the daemon made it, and whether the start was given up on. */
interface ColdAttempt {
  container: Dockerode.Container | null;
  abandoned: boolean;
}
