import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ArtifactsModule, ConversationRuns } from '../artifacts';
import { SecretsModule } from '../secrets';
import { IdentitiesModule } from '../identities';
import { ModelsModule } from '../models';
import { EnvironmentsModule, EnvironmentLatestRuns } from '../environments';
import { SkillsModule, SkillLastRuns } from '../skills';
import { TeamsModule } from '../teams';
import { LimitsModule } from '../limits';
import { Run } from './entities/run.entity';
import { RunAncestor } from './entities/run-ancestor.entity';
import { RunAttachment } from './entities/run-attachment.entity';
import { RunEvent } from './entities/run-event.entity';
import { RunFollowup } from './entities/run-followup.entity';
import { RunMessage } from './entities/run-message.entity';
import { RunMetadata } from './entities/run-metadata.entity';
import { NewRunWriter } from './new-run-writer.service';
import { RunCapacity } from './run-capacity.service';
import { RunCreationService } from './run-creation.service';
import { RunFollowupsService } from './run-followups.service';
import { RunKeysService } from './run-keys.service';
import { RunListQuery } from './run-list.query';
import { RUNS_QUEUE, RunQueue } from './run-queue.service';
import { RunSignals } from './run-signals.service';
import { FailedRunFollowups } from './failed-run-followups';
import { RunGauges } from './run-gauges.service';
import { RunAppends } from './run-appends';
import { RunRecords } from './run-records';
import { RunTransitions } from './run-transitions.service';
import { RunAttachmentsController } from './run-attachments.controller';
import { RunAttachmentsService } from './run-attachments.service';
import { RunsController } from './runs.controller';
import { RunChanges } from './live/run-changes.service';
import { RunStreamHub } from './live/run-stream-hub.service';
import { RunStreamReader } from './live/run-stream-reader.service';
import { RunStreamController } from './run-stream.controller';
import { RunsService } from './runs.service';

/**
 * The run lifecycle, for every role: creation, the run list, transitions and signals, follow-ups,
 * keys, attachments and the live stream. Executing a run is the ExecutionModule's.
 */
@Module({
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
    IdentitiesModule,
    SecretsModule,
    EnvironmentsModule,
    SkillsModule,
    LimitsModule,
  ],
  providers: [
    RunCapacity,
    RunsService,
    RunAttachmentsService,
    RunCreationService,
    NewRunWriter,
    RunFollowupsService,
    FailedRunFollowups,
    RunRecords,
    RunAppends,
    { provide: EnvironmentLatestRuns, useExisting: RunRecords },
    { provide: SkillLastRuns, useExisting: RunRecords },
    { provide: ConversationRuns, useExisting: RunRecords },
    RunGauges,
    RunListQuery,
    RunQueue,
    RunSignals,
    RunTransitions,
    RunChanges,
    RunStreamReader,
    RunStreamHub,
    RunKeysService,
  ],
  exports: [
    EnvironmentLatestRuns,
    SkillLastRuns,
    ConversationRuns,
    RunCapacity,
    RunsService,
    RunCreationService,
    RunTransitions,
    RunQueue,
    RunSignals,
    RunFollowupsService,
    FailedRunFollowups,
    RunRecords,
    RunAppends,
    RunKeysService,
    RunChanges,
    RunAttachmentsService,
    RunStreamHub,
    RunListQuery,
  ],
})
export class RunsModule {}

/** `/agent/runs` (and its attachments and stream) on the API role. */
@Module({
  imports: [RunsModule, TeamsModule],
  controllers: [RunsController, RunAttachmentsController, RunStreamController],
})
export class RunsApiModule {}
