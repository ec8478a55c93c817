import { BullModule } from '@nestjs/bull';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, AppConfig, Role } from '../../config/app-config';
import { HarnessModule } from '../harness/harness.module';
import { ModelsModule } from '../models/models.module';
import { SecretsModule } from '../secrets/secrets.module';
import { TeamsModule } from '../teams/teams.module';
import { DebugAgentWorker } from './debug-agent.worker';
import { DEBUG_AGENTS_QUEUE, DebugAgentQueues, debugQueueName } from './debug-agent-queues';
import { DebugWindowService } from './debug-window.service';
import { Environment, EnvironmentGrant } from './environment.entity';
import { EnvironmentsController } from './environments.controller';
import { EnvironmentsService } from './environments.service';
import { RunSecretsService } from './run-secrets.service';
import { WorkspaceRetentionService } from './workspace-retention.service';
import { WorkspaceRetentionSweeper } from './workspace-retention.sweeper';
import { WorkspaceSetupService } from './workspace-setup.service';

/** Environments, workspace preparation and retention, and the debug window, for every role. */
@Global()
@Module({
  imports: [
    TypeOrmModule.forFeature([Environment, EnvironmentGrant]),
    BullModule.registerQueueAsync({
      name: DEBUG_AGENTS_QUEUE,
      useFactory: (config: AppConfig) => ({ name: debugQueueName(config.runs.workspaceVolume) }),
      inject: [APP_CONFIG],
    }),
    SecretsModule,
    HarnessModule,
  ],
  providers: [
    EnvironmentsService,
    WorkspaceSetupService,
    DebugWindowService,
    DebugAgentQueues,
    WorkspaceRetentionService,
    RunSecretsService,
  ],
  exports: [
    EnvironmentsService,
    WorkspaceSetupService,
    DebugWindowService,
    DebugAgentQueues,
    WorkspaceRetentionService,
    RunSecretsService,
  ],
})
export class EnvironmentsModule {}

/** `/agent/environments` on the API role; debug agents and the workspace retention sweep on workers. */
@Module({})
export class EnvironmentFeaturesModule {
  static forRoles(roles: Role[], runs: DynamicModule): DynamicModule {
    return {
      module: EnvironmentFeaturesModule,
      imports: [EnvironmentsModule, runs, HarnessModule, ModelsModule, TeamsModule],
      controllers: roles.includes('api') ? [EnvironmentsController] : [],
      // DebugAgentWorker's `@QueueProcessor` registers only with the worker role.
      providers: [
        DebugAgentWorker,
        ...(roles.includes('worker') ? [WorkspaceRetentionSweeper] : []),
      ],
    };
  }
}
