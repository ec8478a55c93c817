import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import { Environment } from '../../environments';
import { join, resolve } from 'node:path';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import type { Sandbox } from '../sandbox/sandbox.types';
import { repositoryCommits, snapshotKey } from './snapshot-key';
import { SnapshotStore } from './snapshot-store';
import type { WorkspaceSnapshots } from './workspace-preparation';

/**
 * Backends whose setup leaves nothing outside the workspace that the agent would see: bubblewrap
 * (each command's /tmp is its own, the rest read-only) and process (the host, which persists
 * anyway). A docker container's own filesystem is writable and not in the workspace, so a
 * workspace snapshot alone would lose what setup installed there: docker sets up every time.
 */
const SNAPSHOT_BACKENDS = new Set(['bubblewrap', 'process']);

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

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    const settings = config.environments.snapshots;
    this.store = settings.enabled
      ? new SnapshotStore(join(resolve(config.runs.workspaceRoot), '.snapshots'), {
          maxBytesPerTeam: settings.maxBytesPerTeam,
          maxAgeMs: settings.maxAgeHours * 3_600_000,
        })
      : null;
  }

  /**
   * Snapshots for one run's preparation in `sandbox`; undefined when they are off or the backend
   * keeps state outside the workspace. `image` is read once the environment is loaded.
   */
  for(
    run: { teamId: string; environmentId: string },
    sandbox: Pick<Sandbox, 'backend'>,
    image: () => string | null,
  ): WorkspaceSnapshots | undefined {
    const store = this.store;
    if (!store || !SNAPSHOT_BACKENDS.has(sandbox.backend)) return undefined;
    const { teamId, environmentId } = run;
    return {
      keyFor: async (plan, signal) => {
        // Nothing to set up: a copy would cost more than it saves.
        if (!plan.repos.length && !plan.setupCommands.length) return null;
        const commits = await repositoryCommits(plan, signal);
        if (!commits) return null;
        return snapshotKey({
          teamId,
          environmentId,
          backend: sandbox.backend,
          image: image(),
          gitUrlBase: plan.gitUrlBase,
          repos: plan.repos,
          commits,
          setupCommands: plan.setupCommands,
          env: plan.env,
        });
      },
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
   * Removes crash leftovers, snapshots past their age, those of environments deleted or changed
   * (PATCHed) since they were kept, and each team's beyond its size bound.
   */
  async sweep(): Promise<number> {
    if (!this.store) return 0;
    return this.store.sweep(Date.now(), async (ids) => {
      const updated = new Map<string, number>();
      if (!ids.length) return updated;
      const found = await this.dataSource
        .getRepository(Environment)
        .find({ select: { id: true, updatedAt: true }, where: { id: In(ids) } });
      for (const { id, updatedAt } of found) updated.set(id, updatedAt.getTime());
      return updated;
    });
  }
}
