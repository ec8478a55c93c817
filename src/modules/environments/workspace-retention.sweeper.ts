import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PeriodicTask, PeriodicWorker } from '../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { WorkspaceRetentionService } from './workspace-retention.service';

/** Worker role: every `environments.retentionSweepIntervalMs`, deletes kept workspaces past their deadline. */
@Injectable()
export class WorkspaceRetentionSweeper extends PeriodicWorker {
  protected readonly tasks: PeriodicTask[];

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    retention: WorkspaceRetentionService,
    registry: SchedulerRegistry,
  ) {
    super();
    this.tasks = [
      new PeriodicTask({
        name: 'workspace retention sweep',
        intervalMs: config.environments.retentionSweepIntervalMs,
        logger: new Logger('WorkspaceRetentionSweeper'),
        registry,
        work: () => retention.releaseExpired(),
      }),
    ];
  }
}
