import Dockerode from 'dockerode';
import {
  BubblewrapSandboxBackend,
  bubblewrapWorks,
  privateRootFor,
} from './backends/bubblewrap/bubblewrap-sandbox';
import {
  DockerSandboxBackend,
  defaultImageProblem,
  dockerAnswers,
} from './backends/docker/docker-sandbox';
import { ProcessSandboxBackend } from './backends/process/process-sandbox';
import { cgroupLimitsAvailable } from './cgroup-limits';
import type { SandboxBackendFactory } from './sandbox.types';

/** Docker, on the environment's daemon (DOCKER_HOST) or the one given (tests). */
export function dockerBackendFactory(client?: Dockerode): SandboxBackendFactory {
  return {
    name: 'docker',
    isolated: true,
    async probe({ settings }) {
      const daemon = client ?? new Dockerode();
      if (!(await dockerAnswers(daemon))) {
        return {
          works: false,
          detail: 'no Docker daemon answers (start dockerd or set DOCKER_HOST)',
        };
      }
      // Docker stays chosen (environments may name images that are there); runs without one fail
      // with the same fix until the image is built.
      const missing = await defaultImageProblem(daemon, settings.docker.defaultImage);
      return missing
        ? {
            works: true,
            detail: missing,
            warning: `runs without an environment image will fail: ${missing}`,
          }
        : { works: true };
    },
    create: ({ settings, deployment, workspaceRoot, metrics }) =>
      new DockerSandboxBackend(settings, client, deployment, { workspaceRoot, metrics }),
  };
}

export const bubblewrapBackendFactory: SandboxBackendFactory = {
  name: 'bubblewrap',
  isolated: true,
  async probe() {
    const bwrap = await bubblewrapWorks();
    if (!bwrap.ok) return { works: false, detail: bwrap.detail };
    if (await cgroupLimitsAvailable()) return { works: true };
    return {
      works: true,
      detail: 'memory, pids and CPU limits are not enforced (no writable cgroup tree)',
      warning:
        'bubblewrap sandboxes have no memory, pids or CPU limits: this process cannot write the cgroup tree (run as root or delegate a cgroup)',
    };
  },
  create: ({ settings, workspaceRoot }) =>
    new BubblewrapSandboxBackend({
      readonlyPaths: settings.readonlyPaths
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
      privateRoot: privateRootFor(workspaceRoot),
      maker: settings.bubblewrap?.confine === false ? 'bwrap' : 'spawner',
    }),
};

export const processBackendFactory: SandboxBackendFactory = {
  name: 'process',
  isolated: false,
  probe: () =>
    Promise.resolve({
      works: true,
      detail: 'AMBIENT_SANDBOX=process',
      warning:
        'AMBIENT_SANDBOX=process: runs are NOT isolated; agent commands run as this service on this host and can read its secrets and database',
    }),
  create: () => new ProcessSandboxBackend(),
};

/** Ambient's own backends, registered by the built-in extension in this order. */
export const BUILTIN_SANDBOX_BACKENDS: readonly SandboxBackendFactory[] = [
  dockerBackendFactory(),
  bubblewrapBackendFactory,
  processBackendFactory,
];
