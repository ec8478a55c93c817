import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { PeriodicTask, PeriodicWorker } from '../../../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../../../config/app-config';
import { Factory } from '../entities/factory.entity';
import { RepositorySync } from './repository-sync.service';

/**
 * Worker role: polls every repository-backed factory's production branch for new commits. Never
 * two polls at once; stopping waits for the poll in progress, so it never outlives the pool.
 */
@Injectable()
export class RepositoryPoller extends PeriodicWorker {
  private readonly logger = new Logger('FactoryPoller');
  protected readonly tasks: PeriodicTask[];

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sync: RepositorySync,
    registry: SchedulerRegistry,
  ) {
    super();
    this.tasks = [
      new PeriodicTask({
        name: 'factories.poll',
        intervalMs: config.factories.pollIntervalMs,
        work: () => this.pollFactories(),
        logger: this.logger,
        registry,
      }),
    ];
  }

  /** Polls now, or joins the poll in progress. */
  poll(): Promise<void> {
    return this.tasks[0].runNow();
  }

  private async pollFactories(): Promise<void> {
    const factories = await this.dataSource
      .getRepository(Factory)
      .findBy({ source: 'repository', deletedAt: IsNull() });
    for (const factory of factories) await this.sync.sync(factory);
  }
}
