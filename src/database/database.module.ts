import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { getDataSourceToken, getEntityManagerToken } from '@nestjs/typeorm';
import { DataSource, getMetadataArgsStorage } from 'typeorm';
import { currentRequest } from '../common/request-context';
import type { AppConfig } from '../config/app-config';
import { dataSourceOptions } from './database-setup';
import { PackedTransactions } from './packed-transactions';
import { makePromiseWrappersWithoutRequire } from './promise-wrapper';
import { keepConnectionsForRequests, mysqlPool, requestConnections } from './request-connections';

const RETRY_ATTEMPTS = 2;
const RETRY_DELAY_MS = 1000;

/**
 * Every entity class Ambient has loaded (all of them are its own): what `autoLoadEntities`
 * collected from the `forFeature` calls, without its process-wide bookkeeping.
 */
export function loadedEntities(): DataSourceEntities {
  return getMetadataArgsStorage()
    .tables.map((table) => table.target)
    .filter((target): target is DataSourceEntities[number] => typeof target === 'function');
}
type DataSourceEntities = NonNullable<ConstructorParameters<typeof DataSource>[0]['entities']> &
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  Function[];

async function connect(config: AppConfig, servesHttp: boolean): Promise<DataSource> {
  makePromiseWrappersWithoutRequire();
  for (let attempt = 1; ; attempt += 1) {
    const dataSource = new DataSource({ ...dataSourceOptions(config), entities: loadedEntities() });
    try {
      await dataSource.initialize();
    } catch (err) {
      if (attempt > RETRY_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
      continue;
    }
    keepConnectionsForRequests(
      mysqlPool(dataSource),
      servesHttp ? requestConnections(config.database.poolSize) : 0,
      () => currentRequest() !== undefined,
    );
    return dataSource;
  }
}

/**
 * The application's MySQL pool under the tokens `@InjectDataSource()`, `@InjectRepository()`
 * (TypeOrmModule.forFeature) and `@InjectEntityManager()` resolve. Not TypeOrmModule.forRoot:
 * one Ambient process runs two Nest applications with a pool each (the ingress and the main
 * one), and @nestjs/typeorm keeps a process-wide registry of data source names that took the
 * second for a conflicting duplicate ("A data source with the default name is already
 * registered"). Here each application simply owns its data source.
 */
@Global()
@Module({})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(getDataSourceToken()) private readonly dataSource: DataSource) {}

  /** `servesHttp`: the application serves HTTP requests, for which its pool keeps connections. */
  static forConfig(config: AppConfig, { servesHttp }: { servesHttp: boolean }): DynamicModule {
    const dataSource = {
      provide: getDataSourceToken(),
      useFactory: () => connect(config, servesHttp),
    };
    const manager = {
      provide: getEntityManagerToken(),
      useFactory: (ds: DataSource) => ds.manager,
      inject: [getDataSourceToken()],
    };
    return {
      module: DatabaseModule,
      providers: [dataSource, manager, PackedTransactions],
      exports: [dataSource, manager, PackedTransactions],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
