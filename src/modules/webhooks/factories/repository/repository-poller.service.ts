import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PeriodicTask, PeriodicWorker } from '../../../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../../../config/app-config';
import { FactoryStore } from '../factory-store.repository';
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
    private readonly factories: FactoryStore,
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
    const factories = await this.factories.listRepositoryBacked();
    for (const factory of factories) await this.sync.sync(factory);
  }
}
