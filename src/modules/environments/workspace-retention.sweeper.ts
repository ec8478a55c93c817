import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { WorkspaceRetentionService } from './workspace-retention.service';

/** Worker role: every `environments.retentionSweepIntervalMs`, deletes kept workspaces past their deadline. */
@Injectable()
export class WorkspaceRetentionSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('WorkspaceRetentionSweeper');
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly retention: WorkspaceRetentionService,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(
      () => void this.sweep(),
      this.config.environments.retentionSweepIntervalMs,
    );
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  async sweep(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.retention.releaseExpired();
    } catch (err) {
      this.logger.warn(`sweep failed: ${(err as Error).message}`);
    } finally {
      this.running = false;
    }
  }
}
