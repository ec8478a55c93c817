import type { SandboxSettings } from '../../../config/app-config';
import { dockerImageRefusal, parseDockerImages, registryHost } from '../../../config/docker-images';
import { EgressGuard, EgressRefusedError } from '../../../common/egress/egress-guard';
import type { EnvironmentConfig } from '../../environments';
import { BUILTIN_SANDBOX_BACKENDS } from './builtin-backends';
import {
  EgressRequest,
  EgressServerOptions,
  ExecutionEgress,
  egressPolicyFor,
} from './egress/execution-egress';
import { selectSandboxBackend, SelectedSandbox } from './sandbox-selection';
import {
  Sandbox,
  SandboxBackendFactory,
  SandboxDescription,
  SandboxError,
  SandboxLimits,
  SandboxPoolMetrics,
} from './sandbox.types';

export interface OpenSandbox {
  runId: string;
  executionId: number;
  teamId: string;
  /** Host directory of the run's workspace (it must exist). */
  workspaceDir: string;
  /** The run's environment, whose image, network and resources the sandbox follows. */
  environment: EnvironmentConfig | null;
  /** The API base URL to bridge into the sandbox (the run-scoped key's API); null for none. */
  apiUrl: string | null;
  /** An environment snapshot's image to make the sandbox from (docker); null/absent: none. */
  snapshotImage?: string | null;
  /** The run's host-bound secrets and who hears the proxy's decisions; absent: none. */
  egress?: EgressRequest;
}

/**
 * Opens one sandbox per execution on the backend chosen once (`AMBIENT_SANDBOX`), following the
 * run's environment within the server's limits. Used by Ambient's workers (SandboxService) and by
 * the self-hosted worker program.
 */
export class Sandboxes {
  private selection?: Promise<SelectedSandbox>;
  private selected?: SelectedSandbox;

  constructor(
    private readonly settings: SandboxSettings,
    private readonly workspaceRoot: string,
    /** Names this deployment (or self-hosted worker) on a Docker daemon others may share. */
    private readonly deployment: string,
    private readonly warn: (line: string) => void,
    /** The registered backends, built-ins first (on the self-hosted worker, those of its extensions too). */
    private readonly backends: readonly SandboxBackendFactory[] = BUILTIN_SANDBOX_BACKENDS,
    private readonly metrics?: SandboxPoolMetrics,
    /**
     * What every execution's egress proxy gets (AMBIENT_EGRESS_ALLOW's guard); registries of
     * environments' images must pass the same guard.
     */
    private readonly egress: EgressServerOptions = { guard: new EgressGuard() },
  ) {}

  /** Chooses the backend (once); says why when runs will not be isolated or cannot start. */
  select(): Promise<SelectedSandbox> {
    this.selection ??= selectSandboxBackend(
      this.settings,
      this.workspaceRoot,
      this.deployment,
      this.backends,
      undefined,
      this.metrics,
    ).then((selected) => {
      this.selected = selected;
      if (selected.warning) this.warn(selected.warning);
      if (this.opensSandboxes()) selected.backend?.warm?.();
      return selected;
    });
    return this.selection;
  }

  /**
   * Whether this process opens sandboxes, so that making them ahead of demand (a warm pool) pays:
   * a process that only describes the backend (an API replica's health) must not make any.
   */
  protected opensSandboxes(): boolean {
    return true;
  }

  describe(): SandboxDescription {
    return (
      this.selected?.description ?? {
        backend: 'unavailable',
        isolated: false,
        detail: 'not chosen yet',
      }
    );
  }

  /** Throws SandboxError when no backend works or the sandbox cannot be made. */
  async open(request: OpenSandbox): Promise<Sandbox> {
    const { backend, description } = await this.select();
    if (!backend) {
      throw new SandboxError(description.detail ?? 'no sandbox backend', 'resource_unavailable');
    }
    const { environment } = request;
    if (backend.name === 'docker' && environment?.docker_image) {
      this.assertImageAllowed(environment.docker_image);
      await this.assertRegistryAllowed(environment.docker_image);
    }
    const network = environment?.network ?? this.settings.network;
    const policy = egressPolicyFor(
      network,
      environment,
      request.egress?.secrets ?? [],
      request.egress?.approvedHosts,
    );
    if (policy && !backend.servesEgressProxy && network === 'allowlist') {
      throw new SandboxError(
        `network allowlist needs a sandbox backend that confines the network (AMBIENT_SANDBOX=docker or bubblewrap); the ${backend.name} backend cannot keep its programs to the allowed hosts`,
        'resource_unavailable',
      );
    }
    // A backend that cannot confine programs (process) runs `egress` as it always did; host-bound
    // secrets stay placeholders there (nothing injects them).
    const egress =
      policy && backend.servesEgressProxy
        ? await ExecutionEgress.start(policy, this.egress, request.egress?.onDecision)
        : null;
    let sandbox: Sandbox;
    try {
      sandbox = await backend.open({
        runId: request.runId,
        executionId: request.executionId,
        teamId: request.teamId,
        workspaceDir: request.workspaceDir,
        image: environment?.docker_image || null,
        snapshotImage: request.snapshotImage ?? null,
        network,
        egressProxy: egress?.endpoint ?? null,
        limits: sandboxLimits(this.settings, environment?.resources),
        apiUrl: request.apiUrl,
      });
    } catch (error) {
      await egress?.close();
      throw error;
    }
    return egress ? egress.attach(sandbox) : sandbox;
  }

  /**
   * Checked again at each run: an environment saved before the operator narrowed
   * AMBIENT_DOCKER_IMAGES (or a guest's accepted version of one) fails the run, saying why.
   */
  private assertImageAllowed(image: string): void {
    const { docker } = this.settings;
    const refusal = dockerImageRefusal(
      image,
      parseDockerImages(docker.images, docker.defaultImage),
    );
    if (refusal) {
      throw new SandboxError(
        `the environment's docker_image: ${refusal}; change the environment's image`,
        'environment_setup_failed',
      );
    }
  }

  /**
   * The daemon (root, on the worker) connects wherever a reference's registry host points: that
   * host passes the egress policy first, as the service's own connections do.
   */
  private async assertRegistryAllowed(image: string): Promise<void> {
    const registry = registryHost(image);
    if (!registry) return;
    const [, host, port] = /^(.*?)(?::(\d+))?$/.exec(registry)!;
    try {
      await this.egress.guard.check(host, port ? Number(port) : 443);
    } catch (err) {
      if (!(err instanceof EgressRefusedError)) throw err;
      throw new SandboxError(
        `the environment's docker_image names the registry ${registry}: ${err.message}`,
        'environment_setup_failed',
      );
    }
  }

  /**
   * At the start of a shutdown, before the runs' drain: the backend makes no more sandboxes ahead
   * of demand and removes its idle ones meanwhile (drain waits for them); runs keep theirs.
   */
  stopWarming(): void {
    void this.selection?.then(
      ({ backend }) => backend?.stopWarming?.(),
      () => undefined,
    );
  }

  /** Removes the sandboxes made ahead of demand (warm pool) and makes no more: at shutdown. */
  async drain(): Promise<void> {
    if (!this.selection) return;
    const { backend } = await this.selection;
    if ((await backend?.drain?.()) === false) {
      this.warn(
        `sandbox backend ${backend!.name} did not remove every pooled or closed sandbox in time: the next sweep removes the rest`,
      );
    }
  }

  /** Removes sandboxes of executions that are not live any more (a crashed worker's). */
  async sweep(isLive: (runId: string, executionId: number) => Promise<boolean>): Promise<number> {
    const { backend } = await this.select();
    return backend?.sweep ? backend.sweep(isLive) : 0;
  }
}

/** An environment's own resources where it sets them, the server's defaults elsewhere. */
export function sandboxLimits(
  settings: SandboxSettings,
  requested: EnvironmentConfig['resources'],
): SandboxLimits {
  return {
    memoryMb: Math.min(requested?.memory_mb ?? settings.memoryMb, settings.maxMemoryMb),
    pids: Math.min(requested?.pids ?? settings.pids, settings.maxPids),
    cpus: Math.min(requested?.cpus ?? settings.cpus, settings.maxCpus),
  };
}
