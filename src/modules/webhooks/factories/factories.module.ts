import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ModelsModule } from '../../models';
import { SecretsModule } from '../../secrets';
import { WebhooksModule } from '../webhooks.module';
import { AutomationStore } from './automation-store.repository';
import { DefinitionApplier } from './definition-applier.service';
import { Automation, AutomationWebhookTrigger } from './entities/automation.entity';
import { Factory } from './entities/factory.entity';
import { FactoryFile } from './entities/factory-file.entity';
import { FactoriesController } from './factories.controller';
import { FactoriesService } from './factories.service';
import { FactoryFileStore } from './factory-file-store.repository';
import { FactoryStore } from './factory-store.repository';
import { RepositoryCredentials } from './repository/repository-credentials';
import { RepositoryPoller } from './repository/repository-poller.service';
import { RepositorySync } from './repository/repository-sync.service';

/** Factories, their definitions (managed or from git) and automations. */
@Module({
  imports: [
    TypeOrmModule.forFeature([Factory, FactoryFile, Automation, AutomationWebhookTrigger]),
    ModelsModule,
    SecretsModule,
    WebhooksModule,
  ],
  providers: [
    FactoriesService,
    DefinitionApplier,
    AutomationStore,
    FactoryStore,
    FactoryFileStore,
    RepositorySync,
    RepositoryCredentials,
  ],
  exports: [FactoriesService, DefinitionApplier, AutomationStore, FactoryStore, RepositorySync],
})
export class FactoriesModule {}

/** `/factory…` on the API role. */
@Module({ imports: [FactoriesModule], controllers: [FactoriesController] })
export class FactoriesApiModule {}

/** The repository poller on the worker role. */
@Module({ imports: [FactoriesModule], providers: [RepositoryPoller] })
export class FactoriesWorkerModule {}
