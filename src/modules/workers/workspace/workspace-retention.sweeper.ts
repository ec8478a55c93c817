import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PeriodicTask, PeriodicWorker } from '../../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { KeptWorkspaceRepository } from '../../runs';
import { SandboxService } from '../sandbox/sandbox.service';
import { WorkspaceRetentionService } from './workspace-retention.service';
import { EnvironmentSnapshotsService } from './environment-snapshots.service';

/**
 * Worker role: every `environments.retentionSweepIntervalMs`, deletes kept workspaces of this
 * volume past their deadline; every `environments.orphanSweepIntervalMs` (and at start, after a
 * crash) removes workspace directories no run accounts for, sandboxes (containers) of
 * executions that are not live any more, and environment snapshots past their age or size bound
 * (and a crash's half-written ones).
 */
@Injectable()
export class WorkspaceRetentionSweeper extends PeriodicWorker {
  protected readonly tasks: PeriodicTask[];

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    retention: WorkspaceRetentionService,
    registry: SchedulerRegistry,
    sandboxes: SandboxService,
    records: KeptWorkspaceRepository,
    snapshots: EnvironmentSnapshotsService,
  ) {
    super();
    const logger = new Logger('WorkspaceRetentionSweeper');
    this.tasks = [
      new PeriodicTask({
        name: 'workspace retention sweep',
        intervalMs: config.environments.retentionSweepIntervalMs,
        logger,
        registry,
        work: () => retention.releaseExpired(),
      }),
      new PeriodicTask({
        name: 'workspace orphan sweep',
        intervalMs: config.environments.orphanSweepIntervalMs,
        logger,
        registry,
        runAtStart: true,
        work: async () => {
          const removed = await retention.removeOrphans();
          if (removed) logger.log(`removed ${removed} orphaned workspace director(y/ies)`);
        },
      }),
      new PeriodicTask({
        name: 'sandbox orphan sweep',
        intervalMs: config.environments.orphanSweepIntervalMs,
        logger,
        registry,
        runAtStart: true,
        work: async () => {
          const removed = await sandboxes.sweep((runId, executionId) =>
            records.executionIsLive(runId, executionId, new Date()),
          );
          if (removed) logger.log(`removed ${removed} orphaned sandbox(es)`);
        },
      }),
      new PeriodicTask({
        name: 'environment snapshot sweep',
        intervalMs: config.environments.orphanSweepIntervalMs,
        logger,
        registry,
        runAtStart: true,
        work: async () => {
          const removed = await snapshots.sweep();
          if (removed) logger.log(`removed ${removed} environment snapshot(s) past their bounds`);
        },
      }),
    ];
  }
}
