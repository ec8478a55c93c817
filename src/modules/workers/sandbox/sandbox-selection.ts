import type Dockerode from 'dockerode';
import type { SandboxSettings } from '../../../config/app-config';
import { BUILTIN_SANDBOX_BACKENDS, dockerBackendFactory } from './builtin-backends';
import type {
  SandboxBackend,
  SandboxBackendContext,
  SandboxBackendFactory,
  SandboxPoolMetrics,
  SandboxDescription,
  SandboxProbe,
} from './sandbox.types';

export interface SelectedSandbox {
  /** Null when no isolating backend works: every run then ends in ERROR with `description.detail`. */
  backend: SandboxBackend | null;
  description: SandboxDescription;
  /** Said once at start-up (a warning when runs are not isolated or limits are not enforced). */
  warning?: string;
}

/** What `auto` tries, in this order: never a backend that does not isolate. */
const AUTO = ['docker', 'bubblewrap'];

const FIX =
  'install Docker (and start dockerd) or bubblewrap (apt-get install bubblewrap), or set AMBIENT_SANDBOX=process to run agents unisolated on this host';

/**
 * The backend for `AMBIENT_SANDBOX` among the registered ones (built-ins first): `auto` takes
 * docker when a daemon answers, otherwise bubblewrap when bwrap works, otherwise none (never
 * silently unsafe). A named backend whose probe fails is also none, with the reason.
 */
export async function selectSandboxBackend(
  settings: SandboxSettings,
  workspaceRoot: string,
  /** Names this deployment on a shared Docker daemon (its sweeps touch only its containers). */
  deployment: string,
  backends: readonly SandboxBackendFactory[] = BUILTIN_SANDBOX_BACKENDS,
  /** The daemon the docker backend asks (tests pass their own); DOCKER_HOST's otherwise. */
  dockerClient?: Dockerode,
  metrics?: SandboxPoolMetrics,
): Promise<SelectedSandbox> {
  const registered = dockerClient
    ? backends.map((f) => (f.name === 'docker' ? dockerBackendFactory(dockerClient) : f))
    : backends;
  const context: SandboxBackendContext = { settings, workspaceRoot, deployment, metrics };
  if (settings.backend === 'auto') {
    const reasons: string[] = [];
    for (const factory of AUTO.flatMap((name) => registered.filter((f) => f.name === name))) {
      const probe = await probeOf(factory, context);
      if (probe.works) return chosen(factory, probe, context);
      reasons.push(probe.detail);
    }
    return unavailable(`no sandbox backend works here: ${reasons.join(' and ')}`);
  }
  const factory = registered.find((f) => f.name === settings.backend);
  if (!factory) {
    return unavailable(`AMBIENT_SANDBOX=${settings.backend} names no registered sandbox backend`);
  }
  const probe = await probeOf(factory, context);
  if (!probe.works) return unavailable(`AMBIENT_SANDBOX=${factory.name} but ${probe.detail}`);
  return chosen(factory, probe, context);
}

/** A backend without a probe (an extension's) works; start-up says so, and whether it isolates. */
function probeOf(
  factory: SandboxBackendFactory,
  context: SandboxBackendContext,
): Promise<SandboxProbe> {
  if (factory.probe) return factory.probe(context);
  const { name, isolated } = factory;
  return Promise.resolve({
    works: true,
    detail: `AMBIENT_SANDBOX=${name} (extension)`,
    ...(isolated
      ? {}
      : { warning: `AMBIENT_SANDBOX=${name}: the extension says runs are NOT isolated` }),
  });
}

function chosen(
  factory: SandboxBackendFactory,
  probe: SandboxProbe & { works: true },
  context: SandboxBackendContext,
): SelectedSandbox {
  const { name, isolated } = factory;
  return {
    backend: factory.create(context),
    description: { backend: name, isolated, ...(probe.detail ? { detail: probe.detail } : {}) },
    ...(probe.warning ? { warning: probe.warning } : {}),
  };
}

function unavailable(reason: string): SelectedSandbox {
  const detail = `${reason}; ${FIX}`;
  return {
    backend: null,
    description: { backend: 'unavailable', isolated: false, detail },
    warning: `runs cannot start: ${detail}`,
  };
}
