import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { Factory } from '../entities/factory.entity';
import { RepositorySync } from './repository-sync.service';

const TIMER = 'factories.poll';

/** Worker role: polls every repository-backed factory's production branch for new commits. */
@Injectable()
export class RepositoryPoller implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('FactoryPoller');
  private running = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sync: RepositorySync,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    this.scheduler.addInterval(
      TIMER,
      setInterval(() => void this.poll(), this.config.factories.pollIntervalMs),
    );
  }

  onModuleDestroy(): void {
    if (this.scheduler.doesExist('interval', TIMER)) this.scheduler.deleteInterval(TIMER);
  }

  async poll(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const factories = await this.dataSource
        .getRepository(Factory)
        .findBy({ source: 'repository', deletedAt: IsNull() });
      for (const factory of factories) await this.sync.sync(factory);
    } catch (err) {
      this.logger.warn(`poll failed: ${(err as Error).message}`);
    } finally {
      this.running = false;
    }
  }
}
