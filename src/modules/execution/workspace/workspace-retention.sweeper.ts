import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PeriodicTask, PeriodicWorker } from '../../../common/periodic-task';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { SandboxService } from '../sandbox/sandbox.service';
import { WorkspaceRetentionService } from './workspace-retention.service';

/**
 * Worker role: every `environments.retentionSweepIntervalMs`, deletes kept workspaces of this
 * volume past their deadline; every `environments.orphanSweepIntervalMs` (and at start, after a
 * crash) removes workspace directories no run accounts for, and sandboxes (containers) of
 * executions that are not live any more.
 */
@Injectable()
export class WorkspaceRetentionSweeper extends PeriodicWorker {
  protected readonly tasks: PeriodicTask[];

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    retention: WorkspaceRetentionService,
    registry: SchedulerRegistry,
    sandboxes: SandboxService,
    @InjectDataSource() dataSource: DataSource,
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
            executionIsLive(dataSource, runId, executionId),
          );
          if (removed) logger.log(`removed ${removed} orphaned sandbox(es)`);
        },
      }),
    ];
  }
}

/**
 * An execution is live while its run is claimed or in progress at that execution with a lease
 * not lapsed (a crashed worker's lapses), or while a debug agent may work in its kept workspace.
 */
async function executionIsLive(
  dataSource: DataSource,
  runId: string,
  executionId: number,
): Promise<boolean> {
  const rows = (await dataSource.query(
    `SELECT 1 FROM runs WHERE id = ? AND execution_count = ? AND (
       (state IN ('CLAIMED', 'INPROGRESS') AND lease_expires_at > ?)
       OR workspace_retained_until > ?)`,
    [runId, executionId, new Date(), new Date()],
  )) as unknown[];
  return rows.length > 0;
}
