import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PeriodicTask } from '../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { WorkspaceRetentionService } from './workspace-retention.service';

/** Worker role: every `environments.retentionSweepIntervalMs`, deletes kept workspaces past their deadline. */
@Injectable()
export class WorkspaceRetentionSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly task: PeriodicTask;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    retention: WorkspaceRetentionService,
    registry: SchedulerRegistry,
  ) {
    this.task = new PeriodicTask({
      name: 'workspace retention sweep',
      intervalMs: config.environments.retentionSweepIntervalMs,
      logger: new Logger('WorkspaceRetentionSweeper'),
      registry,
      work: () => retention.releaseExpired(),
    });
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.task.stop();
  }

  sweep(): Promise<void> {
    return this.task.runNow();
  }
}
