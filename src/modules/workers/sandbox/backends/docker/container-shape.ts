import type Dockerode from 'dockerode';
import { join } from 'node:path';
import type { AppConfig } from '../../../../../config/app-config';
import { compiledSpawner } from '../../off-loop-spawn';
import { LAUNCH_HELPER, launcherScript } from './container-launcher';
import { KILLER, KILLER_DIR, killerDirOf, ownPids } from './container-killer';
import { HOSTS_FILE } from './sandbox-dirs';
import {
  SANDBOX_LABELS,
  SANDBOX_PATH,
  SANDBOX_PRIVATE_DIR,
  SANDBOX_WORKDIR,
  type SandboxLimits,
} from '../../sandbox.types';

type SandboxSettings = AppConfig['sandbox'];

/**
 * What the launcher needs beside KILL: switching to the sandbox user (SETUID, SETGID) and
 * emptying its commands' bounding set (SETPCAP). Only root processes of the container (the killer
 * and the launcher, both Ambient's scripts) ever hold them: the sandbox user's processes start
 * with none, cannot gain any (no-new-privileges) and have an empty bounding set.
 */
const LAUNCHER_CAPS = ['SETUID', 'SETGID', 'SETPCAP'];

export function sameLimits(a: SandboxLimits, b: SandboxLimits): boolean {
  return a.memoryMb === b.memoryMb && a.pids === b.pids && a.cpus === b.cpus;
}

/** The memory, pids and CPU limits of a container, as created or as updated at hand-out. */
export function resourceLimits(
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

/** What makes one container differ from another of the same settings. */
export interface ContainerShape {
  name: string;
  image: string;
  workspace: string;
  privateDir: string;
  launchFifo: string | null;
  limits: SandboxLimits;
  tmpfsMb: number;
  labels: Record<string, string>;
}

/**
 * A sandbox container: the killer (see KILLER) as its main process and the launcher beside it,
 * root with no capability but KILL (and the launcher's), no new privileges, its limits, network
 * none, the workspace, private and killer directories bound, labelled as Ambient's.
 */
export function containerShape(
  settings: SandboxSettings,
  /** Names the Ambient deployment (see DockerSandboxBackend). */
  deployment: string,
  shape: ContainerShape,
  /** The cgroup the container's group is made in (DockerHost.cgroupParent); null: docker's. */
  cgroupParent: string | null = null,
  /** The sandbox user, when the launcher is to become the compiled spawner (DockerHost.withSpawner). */
  spawnAs: { uid: number; gid: number } | null = null,
): Dockerode.ContainerCreateOptions {
  const { docker: dockerSettings } = settings;
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
      ...(shape.launchFifo ? [launcherScript(spawnAs), shape.launchFifo] : []),
    ],
    Cmd: [],
    User: '0:0',
    WorkingDir: SANDBOX_WORKDIR,
    Env: [`PATH=${SANDBOX_PATH}`],
    // No network of docker's making: the runtime still gives the container a network namespace
    // of its own with loopback up, but docker adds no prestart hook to set one up, a re-exec of
    // the daemon's binary per container start (~190 ms of CPU and ~200 ms of the start on a host
    // where creating processes is dear). Docker then leaves /etc/hosts to the image: see HOSTS_FILE.
    NetworkDisabled: true,
    Labels: {
      [SANDBOX_LABELS.managed]: '1',
      [SANDBOX_LABELS.deployment]: deployment,
      ...shape.labels,
    },
    HostConfig: {
      Init: true,
      Binds: [
        `${shape.workspace}:${SANDBOX_WORKDIR}:rw`,
        `${shape.privateDir}:${SANDBOX_PRIVATE_DIR}:ro`,
        `${killerDirOf(shape.privateDir)}:${KILLER_DIR}:ro`,
        `${join(killerDirOf(shape.privateDir), HOSTS_FILE)}:/etc/hosts:ro`,
        ...launchHelperBind(shape.launchFifo !== null),
      ],
      CapDrop: ['ALL'],
      CapAdd: ['KILL', ...(shape.launchFifo ? LAUNCHER_CAPS : [])],
      SecurityOpt: ['no-new-privileges'],
      ...resourceLimits(shape.limits, shape.launchFifo !== null),
      // Every network mode: the only way out is the egress proxy's forwarder (see proxyInto).
      NetworkMode: 'none',
      ...(dockerSettings.runtime ? { Runtime: dockerSettings.runtime } : {}),
      ...(cgroupParent ? { CgroupParent: cgroupParent } : {}),
      // The root filesystem stays writable: vendor CLIs write their state under HOME, which
      // the image's user owns. It is the container's own layer, gone at close.
      Tmpfs: { '/tmp': `rw,nosuid,nodev,mode=1777,size=${shape.tmpfsMb}m` },
      LogConfig: { Type: 'none', Config: {} },
      RestartPolicy: { Name: 'no' },
    },
  };
}

/** The compiled spawn helper, read-only at LAUNCH_HELPER, for a container with the launcher. */
function launchHelperBind(launcher: boolean): string[] {
  const helper = launcher ? compiledSpawner() : null;
  return helper ? [`${helper}:${LAUNCH_HELPER}:ro`] : [];
}
