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
import { RunApproval } from './entities/run-approval.entity';
import { RunMessage } from './entities/run-message.entity';
import { RunMetadata } from './entities/run-metadata.entity';
import { NewRunWriter } from './new-run-writer.service';
import { NewRunRepository } from './new-run.repository';
import { RunApprovalRequests } from './run-approval-requests';
import { RunApprovalRepository } from './run-approval.repository';
import { BlockedRunRepository } from './blocked-run.repository';
import { RunEventRepository } from './run-event.repository';
import { RunAttachmentRepository } from './run-attachment.repository';
import { RunCapacity } from './run-capacity.service';
import { RunSlotRepository } from './run-slot.repository';
import { RunCreationService } from './run-creation.service';
import { RunFollowupsService } from './run-followups.service';
import { FollowupAnnouncements } from './followup-announcements';
import { RunKeysService } from './run-keys.service';
import { RunListQuery } from './run-list.repository';
import { RUNS_QUEUE, RunQueue } from './run-queue.service';
import { RunSignals } from './run-signals.service';
import { FailedRunFollowups } from './failed-run-followups';
import { RunGauges } from './run-gauges.service';
import { RunAppends } from './run-appends.repository';
import { ConversationRunRepository } from './conversation-run.repository';
import { RunContentRepository } from './run-content.repository';
import { DebugWindowRepository } from './debug-window.repository';
import { KeptWorkspaceRepository } from './kept-workspace.repository';
import { LatestRunRepository } from './latest-run.repository';
import { RunLeaseRepository } from './run-lease.repository';
import { RunLookupRepository } from './run-lookup.repository';
import { RunStateCountRepository } from './run-state-count.repository';
import { RunUsageRepository } from './run-usage.repository';
import { RunTransitions } from './run-transitions.service';
import { RunTransitionRepository } from './run-transition.repository';
import { RunFollowupRepository } from './run-followup.repository';
import { RunAttachmentsController } from './run-attachments.controller';
import { RunAttachmentsService } from './run-attachments.service';
import { RunsController } from './runs.controller';
import { RunChanges } from './live/run-changes.service';
import { RunStreamHub } from './live/run-stream-hub.service';
import { RunStreamReader } from './live/run-stream-reader.service';
import { RunStreamRepository } from './live/run-stream.repository';
import { RunStreamController } from './run-stream.controller';
import { LiveRunsController } from './live/live-runs.controller';
import { RunsService } from './runs.service';

/** The `runs` table's statements that other modules use (each class one concern). */
const RUN_REPOSITORIES = [
  RunEventRepository,
  RunAttachmentRepository,
  RunApprovalRepository,
  BlockedRunRepository,
  RunLookupRepository,
  RunLeaseRepository,
  KeptWorkspaceRepository,
  DebugWindowRepository,
  RunUsageRepository,
  ConversationRunRepository,
  RunContentRepository,
];

/**
 * The run lifecycle, for every role: creation, the run list, transitions and signals, follow-ups,
 * keys, attachments and the live stream. Executing a run is the WorkersModule's.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      Run,
      RunEvent,
      RunFollowup,
      RunApproval,
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
    RunApprovalRequests,
    RunCapacity,
    RunSlotRepository,
    RunsService,
    RunAttachmentsService,
    RunCreationService,
    NewRunWriter,
    NewRunRepository,
    RunFollowupsService,
    FollowupAnnouncements,
    FailedRunFollowups,
    ...RUN_REPOSITORIES,
    RunStateCountRepository,
    LatestRunRepository,
    RunAppends,
    { provide: EnvironmentLatestRuns, useExisting: LatestRunRepository },
    { provide: SkillLastRuns, useExisting: LatestRunRepository },
    { provide: ConversationRuns, useExisting: ConversationRunRepository },
    RunGauges,
    RunListQuery,
    RunQueue,
    RunSignals,
    RunTransitions,
    RunTransitionRepository,
    RunFollowupRepository,
    RunChanges,
    RunStreamReader,
    RunStreamRepository,
    RunStreamHub,
    RunKeysService,
  ],
  exports: [
    RunApprovalRequests,
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
    FollowupAnnouncements,
    FailedRunFollowups,
    ...RUN_REPOSITORIES,
    RunAppends,
    RunKeysService,
    RunChanges,
    RunAttachmentsService,
    RunStreamHub,
    RunStreamReader,
    RunListQuery,
  ],
})
export class RunsModule {}

/** `/agent/runs` (and its attachments and stream) and the console's live-runs stream on the API role. */
@Module({
  imports: [RunsModule, TeamsModule],
  controllers: [RunsController, RunAttachmentsController, RunStreamController, LiveRunsController],
})
export class RunsApiModule {}
