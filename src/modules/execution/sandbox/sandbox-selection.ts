import Dockerode from 'dockerode';
import { SANDBOX_SETTINGS_BACKENDS, type SandboxSettings } from '../../../config/app-config';
import {
  BubblewrapSandboxBackend,
  bubblewrapWorks,
  privateRootFor,
} from './backends/bubblewrap/bubblewrap-sandbox';
import { cgroupLimitsAvailable } from './cgroup-limits';
import {
  DockerSandboxBackend,
  defaultImageProblem,
  dockerAnswers,
} from './backends/docker/docker-sandbox';
import { ProcessSandboxBackend } from './backends/process/process-sandbox';
import type { SandboxBackend, SandboxBackendFactory, SandboxDescription } from './sandbox.types';

export interface SelectedSandbox {
  /** Null when no isolating backend works: every run then ends in ERROR with `description.detail`. */
  backend: SandboxBackend | null;
  description: SandboxDescription;
  /** Said once at start-up (a warning when runs are not isolated or limits are not enforced). */
  warning?: string;
}

const FIX =
  'install Docker (and start dockerd) or bubblewrap (apt-get install bubblewrap), or set AMBIENT_SANDBOX=process to run agents unisolated on this host';

/**
 * The backend for `AMBIENT_SANDBOX`: `auto` takes docker when a daemon answers, otherwise
 * bubblewrap when bwrap works, otherwise none (never silently unsafe). An explicitly named backend
 * that does not work is also none, with the reason.
 */
export async function selectSandboxBackend(
  settings: SandboxSettings,
  workspaceRoot: string,
  /** Names this deployment on a shared Docker daemon (its sweeps touch only its containers). */
  deployment: string,
  /** Backends extensions register; AMBIENT_SANDBOX=<name> chooses one. */
  extensionBackends: readonly SandboxBackendFactory[] = [],
  /** The daemon to ask (tests pass their own); the environment's (DOCKER_HOST) otherwise. */
  dockerClient?: Dockerode,
): Promise<SelectedSandbox> {
  const fromExtension = extensionBackends.find((f) => f.name === settings.backend);
  if (fromExtension) {
    const backend = fromExtension.create({ settings, workspaceRoot, deployment });
    const { name, isolated } = fromExtension;
    return {
      backend,
      description: { backend: name, isolated, detail: `AMBIENT_SANDBOX=${name} (extension)` },
      ...(isolated
        ? {}
        : { warning: `AMBIENT_SANDBOX=${name}: the extension says runs are NOT isolated` }),
    };
  }
  if (!(SANDBOX_SETTINGS_BACKENDS as readonly string[]).includes(settings.backend)) {
    return unavailable(`AMBIENT_SANDBOX=${settings.backend} names no registered sandbox backend`);
  }
  const bubblewrap = (): SandboxBackend =>
    new BubblewrapSandboxBackend({
      readonlyPaths: settings.readonlyPaths
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
      privateRoot: privateRootFor(workspaceRoot),
    });
  const docker = (): SandboxBackend => new DockerSandboxBackend(settings, dockerClient, deployment);
  const chosen = settings.backend;

  if (chosen === 'process') {
    return {
      backend: new ProcessSandboxBackend(),
      description: { backend: 'process', isolated: false, detail: 'AMBIENT_SANDBOX=process' },
      warning:
        'AMBIENT_SANDBOX=process: runs are NOT isolated; agent commands run as this service on this host and can read its secrets and database',
    };
  }
  if (chosen === 'docker' || chosen === 'auto') {
    const client = dockerClient ?? new Dockerode();
    if (await dockerAnswers(client)) {
      // Docker stays chosen (environments may name images that are there); runs without one fail
      // with the same fix until the image is built.
      const missing = await defaultImageProblem(client, settings.docker.defaultImage);
      return {
        backend: docker(),
        description: { backend: 'docker', isolated: true, ...(missing ? { detail: missing } : {}) },
        ...(missing ? { warning: `runs without an environment image will fail: ${missing}` } : {}),
      };
    }
    if (chosen === 'docker') {
      return unavailable(
        `AMBIENT_SANDBOX=docker but no Docker daemon answers (start dockerd or set DOCKER_HOST)`,
      );
    }
  }
  const bwrap = await bubblewrapWorks();
  if (bwrap.ok) {
    const limits = await cgroupLimitsAvailable();
    return {
      backend: bubblewrap(),
      description: {
        backend: 'bubblewrap',
        isolated: true,
        ...(limits
          ? {}
          : { detail: 'memory, pids and CPU limits are not enforced (no writable cgroup tree)' }),
      },
      ...(limits
        ? {}
        : {
            warning:
              'bubblewrap sandboxes have no memory, pids or CPU limits: this process cannot write the cgroup tree (run as root or delegate a cgroup)',
          }),
    };
  }
  if (chosen === 'bubblewrap') return unavailable(`AMBIENT_SANDBOX=bubblewrap but ${bwrap.detail}`);
  return unavailable(`no sandbox backend works here: no Docker daemon answers and ${bwrap.detail}`);
}

function unavailable(reason: string): SelectedSandbox {
  const detail = `${reason}; ${FIX}`;
  return {
    backend: null,
    description: { backend: 'unavailable', isolated: false, detail },
    warning: `runs cannot start: ${detail}`,
  };
}
