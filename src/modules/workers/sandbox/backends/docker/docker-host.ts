import type Dockerode from 'dockerode';
import type { AppConfig } from '../../../../../config/app-config';
import { settlesWithin } from '../../../../../common/time';
import { sandboxesParentGroup } from '../../cgroup-limits';
import { killContainerInit, type ContainerInit } from './container-init';
import { containerShape, type ContainerShape } from './container-shape';
import { apiError, reason } from './docker-errors';
import { compiledSpawner } from '../../off-loop-spawn';
import { numericUser } from './sandbox-dirs';

type SandboxSettings = AppConfig['sandbox'];

/** How long a removal waits for the daemon to see the container exit after its init was killed. */
const EXIT_WAIT_MS = 10_000;
/** How long the daemon has to say which cgroup driver it uses before the answer is taken as none. */
export const INFO_WAIT_MS = 10_000;

/**
 * The docker daemon as the sandbox backend's parts use it: the client, the sandbox settings and
 * the deployment its containers are labelled with, and what follows from them.
 */
export class DockerHost {
  /**
   * Whether containers get a command launcher (container-launcher.ts): AMBIENT_DOCKER_LAUNCHER
   * is not off, the user is numeric, the daemon is local (its bind mounts are this host's
   * directories, where the launcher's FIFOs are) and the runtime is runc's (gVisor's file
   * system does not share FIFOs with the host).
   */
  readonly withLauncher: boolean;
  /**
   * Whether a container's launcher becomes the compiled spawner (container-spawner.ts): it has a
   * launcher, the helper was built, and AMBIENT_DOCKER_SPAWNER is not off.
   */
  readonly withSpawner: boolean;

  constructor(
    readonly docker: Dockerode,
    readonly settings: SandboxSettings,
    /** Names this Ambient deployment: the sweep touches only its own containers. */
    readonly deployment: string,
    /** How long cgroupParent waits for the daemon's info (INFO_WAIT_MS). */
    private readonly infoWaitMs = INFO_WAIT_MS,
  ) {
    this.withLauncher =
      settings.docker.launcher !== false &&
      this.user !== null &&
      !settings.docker.runtime &&
      this.daemonIsLocal();
    this.withSpawner =
      this.withLauncher && settings.docker.spawner !== false && compiledSpawner() !== null;
  }

  /** The sandbox user as numbers; null for a user name (Ambient cannot chown to it). */
  get user(): { uid: number; gid: number } | null {
    return numericUser(this.settings.docker.user);
  }

  /** The create options of a container of these settings (see containerShape). */
  async shape(shape: ContainerShape): Promise<Dockerode.ContainerCreateOptions> {
    return containerShape(
      this.settings,
      this.deployment,
      shape,
      await this.cgroupParent(),
      this.withSpawner ? this.user : null,
    );
  }

  private parentGroup: Promise<string | null> | undefined;
  /** The daemon's info while it is being asked for (see cgroupParent). */
  private infoAsked: Promise<{ CgroupDriver?: string } | null> | undefined;

  /**
   * The cgroup parent of the containers: the sandboxes' group (`/ambient`), which every sandbox
   * shares at an eighth of the service's CPU weight, as bubblewrap's do (SANDBOXES_CPU_WEIGHT);
   * docker's default (`/docker`, weighted as the service itself) where Ambient cannot make that
   * group (not root, a remote daemon) or docker's cgroups are systemd's (named by slice).
   */
  cgroupParent(): Promise<string | null> {
    this.parentGroup ??= (async () => {
      if (!this.reachesContainerPids()) return null;
      // One question at a time: a daemon that does not answer is not asked again per start.
      const asking = (this.infoAsked ??= (
        this.docker.info().catch(() => null) as Promise<{ CgroupDriver?: string } | null>
      ).finally(() => (this.infoAsked = undefined)));
      // A daemon that does not answer is not waited for by every later start (this is cached).
      const info = (await settlesWithin(asking, this.infoWaitMs)) ? await asking : null;
      // Asked again next time: the daemon may answer then.
      if (!info) this.parentGroup = undefined;
      return info?.CgroupDriver === 'cgroupfs' ? sandboxesParentGroup() : null;
    })();
    return this.parentGroup;
  }

  /**
   * Whether a container's pid is one of this host's and this process may enter (nsenter: the
   * API bridge) and signal it (a closed sandbox's kill): it is root and the daemon is local (a
   * Unix socket).
   */
  reachesContainerPids(): boolean {
    return process.getuid?.() === 0 && this.daemonIsLocal();
  }

  /**
   * Removes a container with everything running in it; nothing when it is already gone. Given
   * its init (a process of this host), it ends the container itself first, by a SIGKILL to the
   * init, and has the daemon remove it once it saw it exit: a running container's `rm -f` makes
   * the daemon start the runtime to kill it (`runc kill`, a process of its own), about a third of
   * the removal's CPU on a 2-vCPU VM (docs/PERFORMANCE.md).
   */
  async removeContainer(
    container: Dockerode.Container,
    init: ContainerInit | null = null,
  ): Promise<void> {
    if (init && killContainerInit(init)) {
      // A daemon slow to notice is then asked to remove it regardless (rm -f kills it as ever).
      await settlesWithin(container.wait({ condition: 'not-running' }), EXIT_WAIT_MS);
    }
    try {
      await container.remove({ force: true, v: true });
    } catch (error) {
      const e = apiError(error);
      // 404: gone; 409: its removal is already in progress.
      if (e.statusCode === 404 || (e.statusCode === 409 && /in progress/i.test(reason(e)))) return;
      throw error;
    }
  }

  private daemonIsLocal(): boolean {
    const modem = (this.docker.modem ?? {}) as { host?: string; socketPath?: unknown };
    return !modem.host && Boolean(modem.socketPath);
  }
}
