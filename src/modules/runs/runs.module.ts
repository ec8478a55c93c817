import { BullModule } from '@nestjs/bull';
import { DynamicModule, Module, Provider } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Role } from '../../config/app-config';
import { ArtifactsModule } from '../artifacts/artifacts.module';
import { TranscriptsModule } from '../conversations/transcripts.module';
import { HarnessModule } from '../harness/harness.module';
import { SecretsModule } from '../secrets/secrets.module';
import { IdentitiesModule } from '../identities/identities.module';
import { ModelsModule } from '../models/models.module';
import { TeamsModule } from '../teams/teams.module';
import { Run } from './entities/run.entity';
import { RunAncestor } from './entities/run-ancestor.entity';
import { RunAttachment } from './entities/run-attachment.entity';
import { RunEvent } from './entities/run-event.entity';
import { RunFollowup } from './entities/run-followup.entity';
import { RunMessage } from './entities/run-message.entity';
import { RunMetadata } from './entities/run-metadata.entity';
import { ExecutionContextFactory } from './execution/execution-context.factory';
import { RunExecutor } from './execution/run-executor.service';
import { RunSweeper } from './execution/run-sweeper.service';
import { RemoteExecutionService } from './execution/remote-execution.service';
import { RunWorker } from './execution/run-worker.service';
import { SelfHostedRuns } from './execution/self-hosted-runs.service';
import { NewRunWriter } from './new-run-writer.service';
import { RunCreationService } from './run-creation.service';
import { RunFollowupsService } from './run-followups.service';
import { RunKeysService } from './run-keys.service';
import { RunListQuery } from './run-list.query';
import { RUNS_QUEUE, RunQueue } from './run-queue.service';
import { RunSignals } from './run-signals.service';
import { RunTransitions } from './run-transitions.service';
import { ExecutionFence } from './execution/execution-fence';
import { RunAttachmentsController } from './run-attachments.controller';
import { RunAttachmentsService } from './run-attachments.service';
import { RunsController } from './runs.controller';
import { RunChanges } from './live/run-changes.service';
import { RunStreamHub } from './live/run-stream-hub.service';
import { RunStreamReader } from './live/run-stream-reader.service';
import { RunStreamController } from './run-stream.controller';
import { RunsService } from './runs.service';

@Module({})
export class RunsModule {
  /**
   * The API role serves the controller; the worker role sweeps, and executes runs: RunWorker is
   * provided everywhere, its `@QueueProcessor` registers only with the worker role.
   */
  static forRoles(roles: Role[]): DynamicModule {
    const workerProviders: Provider[] = roles.includes('worker') ? [RunSweeper] : [];
    return {
      module: RunsModule,
      imports: [
        TypeOrmModule.forFeature([
          Run,
          RunEvent,
          RunFollowup,
          RunAttachment,
          RunMetadata,
          RunAncestor,
          RunMessage,
        ]),
        BullModule.registerQueue({ name: RUNS_QUEUE }),
        TeamsModule,
        ModelsModule,
        ArtifactsModule,
        TranscriptsModule,
        HarnessModule,
        IdentitiesModule,
        SecretsModule,
      ],
      controllers: roles.includes('api')
        ? [RunsController, RunAttachmentsController, RunStreamController]
        : [],
      providers: [
        RunsService,
        RunAttachmentsService,
        RunCreationService,
        NewRunWriter,
        RunFollowupsService,
        RunListQuery,
        RunQueue,
        RunSignals,
        RunTransitions,
        RunChanges,
        RunStreamReader,
        RunStreamHub,
        RunKeysService,
        ExecutionContextFactory,
        ExecutionFence,
        SelfHostedRuns,
        RemoteExecutionService,
        RunExecutor,
        RunWorker,
        ...workerProviders,
      ],
      exports: [
        RunsService,
        RunCreationService,
        RunTransitions,
        RunQueue,
        RunSignals,
        RunFollowupsService,
        RunKeysService,
        ExecutionContextFactory,
        SelfHostedRuns,
        RemoteExecutionService,
      ],
    };
  }
}
