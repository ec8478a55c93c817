import { Inject, Injectable, Logger } from '@nestjs/common';
import { EnvironmentRepository } from '../../environments';
import { join, resolve } from 'node:path';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import Dockerode from 'dockerode';
import type { Sandbox } from '../sandbox/sandbox.types';
import { deploymentName } from '../sandbox/sandbox.service';
import { SnapshotImages, snapshotImageTag } from '../sandbox/backends/docker/docker-snapshot-image';
import { repositoryCommits, snapshotKey } from './snapshot-key';
import { SnapshotStore } from './snapshot-store';
import type { SetupPlan, WorkspaceSnapshots } from './workspace-preparation';

/**
 * Backends whose setup leaves nothing outside the workspace that the agent would see: bubblewrap
 * (each command's /tmp is its own, the rest read-only) and process (the host, which persists
 * anyway). A docker container's own filesystem is writable and not in the workspace: there a
 * snapshot is the workspace and a `docker commit` of the container (see `beforeOpen`).
 */
const WORKSPACE_ONLY_BACKENDS = new Set(['bubblewrap', 'process']);
const DOCKER = 'docker';
/** A snapshot image this old without its snapshot on the disk is an orphan (a commit takes seconds). */
const IMAGE_GRACE_MS = 60 * 60_000;

/**
 * A docker execution's snapshot, known before its sandbox is opened: the key and, when the key
 * has a snapshot with its image, the image to make the container from.
 */
export interface DockerSnapshot {
  key: string;
  image: string | null;
}

/**
 * Environment snapshots on this worker's disk (`<workspace root>/.snapshots`): a successful setup
 * is kept under a key of the team, environment, backend, image, repositories' commits, setup
 * commands and setup variables, and the next run with that key starts from it.
 * AMBIENT_ENVIRONMENT_SNAPSHOTS=off turns them off.
 */
@Injectable()
export class EnvironmentSnapshotsService {
  private readonly logger = new Logger('EnvironmentSnapshots');
  readonly store: SnapshotStore | null;
  /** This deployment's snapshot images on the local Docker daemon. */
  readonly images: SnapshotImages;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly environments: EnvironmentRepository,
  ) {
    const settings = config.environments.snapshots;
    this.images = new SnapshotImages(new Dockerode(), deploymentName(config));
    this.store = settings.enabled
      ? new SnapshotStore(
          join(resolve(config.runs.workspaceRoot), '.snapshots'),
          {
            maxBytesPerTeam: settings.maxBytesPerTeam,
            maxAgeMs: settings.maxAgeHours * 3_600_000,
          },
          async (tag) => void (await this.images.remove(tag)),
        )
      : null;
  }

  /**
   * On docker the container is made before setup, so the key is needed before the sandbox is
   * opened: it, and the snapshot image to make the container from when the key has one (its
   * workspace is restored in `prepareWorkspace`). Null when snapshots are off or there is no key.
   */
  async beforeOpen(
    run: { teamId: string; environmentId: string },
    plan: SetupPlan,
    image: string | null,
    signal: AbortSignal,
  ): Promise<DockerSnapshot | null> {
    const store = this.store;
    if (!store) return null;
    const key = await this.keyOf(run, DOCKER, plan, image, signal);
    if (!key) return null;
    const tag = await store.imageOf(run.teamId, run.environmentId, key).catch(() => null);
    return { key, image: tag && (await this.images.exists(tag)) ? tag : null };
  }

  /**
   * Snapshots for one run's preparation in `sandbox`; undefined when they are off or the backend
   * keeps state outside the workspace. `image` is read once the environment is loaded.
   */
  for(
    run: { teamId: string; environmentId: string },
    sandbox: Pick<Sandbox, 'backend' | 'commitSnapshot'>,
    image: () => string | null,
    docker?: DockerSnapshot | null,
  ): WorkspaceSnapshots | undefined {
    const store = this.store;
    if (!store) return undefined;
    if (sandbox.backend === DOCKER)
      return docker ? this.forDocker(run, sandbox, docker) : undefined;
    if (!WORKSPACE_ONLY_BACKENDS.has(sandbox.backend)) return undefined;
    const { teamId, environmentId } = run;
    return {
      keyFor: (plan, signal) => this.keyOf(run, sandbox.backend, plan, image(), signal),
      restore: (key, dir) => store.restore(teamId, environmentId, key, dir).catch(() => false),
      keep: async (key, dir) => {
        try {
          await store.keep(teamId, environmentId, key, dir);
        } catch (err) {
          this.logger.warn(`could not keep a snapshot of ${environmentId}: ${String(err)}`);
        }
      },
    };
  }

  /**
   * A docker execution's snapshots: the key was computed before the sandbox was opened; the
   * workspace is restored only when the container was made from the key's image, and a
   * successful setup is kept as the workspace and a commit of the container.
   */
  private forDocker(
    run: { teamId: string; environmentId: string },
    sandbox: Pick<Sandbox, 'commitSnapshot'>,
    docker: DockerSnapshot,
  ): WorkspaceSnapshots | undefined {
    const store = this.store;
    if (!store || !sandbox.commitSnapshot) return undefined;
    const { teamId, environmentId } = run;
    return {
      keyFor: async () => docker.key,
      restore: async (key, dir) =>
        Boolean(docker.image) &&
        (await store.restore(teamId, environmentId, key, dir).catch(() => false)),
      keep: async (key, dir) => {
        try {
          const sizeBytes = await sandbox.commitSnapshot!({ teamId, environmentId, key });
          await store.keep(teamId, environmentId, key, dir, {
            tag: snapshotImageTag(key),
            sizeBytes,
          });
        } catch (err) {
          this.logger.warn(`could not keep a snapshot of ${environmentId}: ${String(err)}`);
        }
      },
    };
  }

  private async keyOf(
    run: { teamId: string; environmentId: string },
    backend: string,
    plan: SetupPlan,
    image: string | null,
    signal: AbortSignal,
  ): Promise<string | null> {
    // Nothing to set up: a copy would cost more than it saves.
    if (!plan.repos.length && !plan.setupCommands.length) return null;
    const commits = await repositoryCommits(plan, signal);
    if (!commits) return null;
    return snapshotKey({
      teamId: run.teamId,
      environmentId: run.environmentId,
      backend,
      image,
      gitUrlBase: plan.gitUrlBase,
      repos: plan.repos,
      commits,
      setupCommands: plan.setupCommands,
      env: plan.env,
    });
  }

  /**
   * Removes crash leftovers, snapshots past their age, those of environments deleted or changed
   * (PATCHed) since they were kept, and each team's beyond its size bound.
   */
  async sweep(): Promise<number> {
    const store = this.store;
    if (!store) return 0;
    const removed = await store.sweep(Date.now(), async (ids) => {
      const updated = new Map<string, number>();
      if (!ids.length) return updated;
      const found = await this.environments.updatedAtOf(ids);
      for (const { id, updatedAt } of found) updated.set(id, updatedAt.getTime());
      return updated;
    });
    return removed + (await this.sweepImages(store));
  }

  /**
   * Removes this deployment's snapshot images whose snapshot is gone from the disk (discarded
   * while a container still used the image, or of a deleted environment); none without docker.
   */
  private async sweepImages(store: SnapshotStore, now = Date.now()): Promise<number> {
    let removed = 0;
    const images = await this.images.list().catch(() => []);
    for (const image of images) {
      if (now - image.createdAt < IMAGE_GRACE_MS) continue; // its snapshot may be being kept
      if (await store.has(image.teamId, image.environmentId, image.key)) continue;
      if (await this.images.remove(image.tag)) removed++;
    }
    return removed;
  }
}
