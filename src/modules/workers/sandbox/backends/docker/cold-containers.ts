import type Dockerode from 'dockerode';
import { SANDBOX_LABELS, SandboxError, type SandboxSpec } from '../../sandbox.types';
import { chownTree } from './chown-tree';
import { ColdStartSlots } from './cold-start-slots';
import { containerInit } from './container-init';
import { killerDirOf } from './container-killer';
import { bridgeInto, launcherStarted, proxyInto } from './container-plumbing';
import { apiError, daemonDown, reason, unavailable } from './docker-errors';
import type { DockerHost } from './docker-host';
import type { StartedContainer } from './docker-sandbox-instance';
import { ensureImage } from './sandbox-image';
import { containerName, makePrivateDirs, removeDirs } from './sandbox-dirs';

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

  constructor(private readonly host: DockerHost) {}

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
   * started, having removed whatever it made; stops early once the sandbox is being closed.
   */
  async start(
    spec: SandboxSpec,
    image: string,
    workspace: string,
    dirs: ExecutionDirs,
    apiUrl: string | null,
    closeRequested: () => boolean,
  ): Promise<StartedContainer> {
    const { docker } = this.host;
    const { privateDir, launchFifo } = dirs;
    const closed = (): Error => new Error('the sandbox was closed before its container started');
    const name = containerName(spec);
    let container: Dockerode.Container | null = null;
    const releaseSlot = await this.coldStarts.acquire();
    try {
      if (closeRequested()) throw closed();
      // A container a crashed process left under this name.
      await this.host.removeContainer(docker.getContainer(name));
      if (closeRequested()) throw closed();
      const options = await this.containerOptions(spec, image, name, workspace, dirs);
      container = await docker.createContainer(options).catch(async (error: unknown) => {
        // 409: one of that name appeared meanwhile (another open of the same execution).
        if (apiError(error).statusCode !== 409) throw error;
        await this.host.removeContainer(docker.getContainer(name));
        return docker.createContainer(options);
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
      const init = this.host.reachesContainerPids() ? containerInit(State.Pid) : null;
      return { container, bridge, proxyForwarder, init, privateDir };
    } catch (error) {
      releaseSlot();
      if (container) await this.host.removeContainer(container).catch(() => undefined);
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
