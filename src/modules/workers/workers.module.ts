import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { ArtifactsModule } from '../artifacts';
import { TranscriptsModule } from '../conversations';
import { EnvironmentsModule } from '../environments';
import { IdentitiesModule } from '../identities';
import { ModelsModule } from '../models';
import { RunsModule } from '../runs';
import { SecretsModule } from '../secrets';
import { TeamsModule } from '../teams';
import { LimitsModule } from '../limits';
import { NotificationsModule } from '../notifications';
import { ExecutionApprovals } from './approvals/execution-approvals.service';
import { RunBlocking } from './approvals/run-blocking';
import { DebugAgentWorker } from './debug/debug-agent.worker';
import { DEBUG_AGENTS_QUEUE, DebugAgentQueues, debugQueueName } from './debug/debug-agent-queues';
import { DebugWindowService } from './debug/debug-window.service';
import { ExecutionContextFactory } from './execution-context.factory';
import { ExecutionEnds } from './execution-ends';
import { ExecutionFence } from './execution-fence';
import { ExecutionLeases } from './execution-lease';
import { ExecutionOutcomes } from './execution-outcome';
import { ExecutionUsage } from './execution-usage';
import { RunBudget } from './run-budget.service';
import { RunSecretsService } from './execution-secrets.service';
import { ConnectedWorkersController } from './remote/connected-workers.controller';
import { WorkerCredentialsController } from './remote/credentials/worker-credentials.controller';
import { WorkerCredentialRepository } from './remote/credentials/worker-credential.repository';
import { WorkerCredentialsService } from './remote/credentials/worker-credentials.service';
import { HarnessSupportController } from './remote/harness-support.controller';
import { RemoteExecutionService } from './remote/remote-execution.service';
import { SelfHostedDispatcher } from './remote/self-hosted-dispatcher.service';
import { SelfHostedRuns } from './remote/self-hosted-runs.service';
import { SelfHostedSweeper } from './remote/self-hosted-sweeper.service';
import { WorkerGateway } from './remote/worker-gateway.service';
import { WorkerPresence } from './remote/worker-presence.service';
import { RunExecutor } from './run-executor.service';
import { RunSweeper } from './run-sweeper.service';
import { RunWorker } from './run-worker.service';
import { HarnessRegistryModule } from './harness/harness-registry.module';
import { SandboxModule } from './sandbox/sandbox.module';
import { WorkspaceRetentionService } from './workspace/workspace-retention.service';
import { WorkspaceRetentionSweeper } from './workspace/workspace-retention.sweeper';
import { WorkspaceSetupService } from './workspace/workspace-setup.service';
import { WorkspaceService } from './workspace/workspace.service';
import { EnvironmentSnapshotsService } from './workspace/environment-snapshots.service';

/**
 * Everything that executes a run, for every role: the executor and its fence, the execution
 * context, the sandbox, workspaces (setup, retention), the debug agent, and remote execution.
 * Its queue processors (`@QueueProcessor`) register only with the worker role.
 */
@Module({
  imports: [
    BullModule.registerQueueAsync({
      name: DEBUG_AGENTS_QUEUE,
      useFactory: (config: AppConfig) => ({ name: debugQueueName(config.runs.workspaceVolume) }),
      inject: [APP_CONFIG],
    }),
    RunsModule,
    EnvironmentsModule,
    IdentitiesModule,
    TeamsModule,
    ModelsModule,
    LimitsModule,
    NotificationsModule,
    SecretsModule,
    ArtifactsModule,
    TranscriptsModule,
    HarnessRegistryModule,
    SandboxModule,
  ],
  providers: [
    WorkspaceService,
    WorkspaceSetupService,
    EnvironmentSnapshotsService,
    WorkspaceRetentionService,
    RunSecretsService,
    ExecutionFence,
    ExecutionEnds,
    ExecutionLeases,
    ExecutionUsage,
    RunBudget,
    ExecutionApprovals,
    RunBlocking,
    ExecutionOutcomes,
    ExecutionContextFactory,
    SelfHostedRuns,
    RemoteExecutionService,
    RunExecutor,
    RunWorker,
    DebugAgentQueues,
    DebugWindowService,
    DebugAgentWorker,
  ],
  exports: [
    SandboxModule,
    WorkspaceRetentionService,
    SelfHostedRuns,
    RemoteExecutionService,
    RunSecretsService,
    WorkspaceSetupService,
    EnvironmentSnapshotsService,
    ExecutionContextFactory,
  ],
})
export class WorkersModule {}

/** The worker role's housekeeping: lost executions back to the queue, kept workspaces removed. */
@Module({
  imports: [WorkersModule, RunsModule],
  providers: [RunSweeper, WorkspaceRetentionSweeper],
})
export class ExecutionWorkerModule {}

/**
 * Self-hosted workers on the API role: the worker websocket on the API's HTTP server, worker
 * presence in Redis, offering runs to connected workers, the run-scoped `/harness-support` API
 * their executions report through, `GET /agent/connected-self-hosted-workers`, and the worker
 * credentials workers register with (`/worker-credentials`).
 */
@Module({
  imports: [WorkersModule, RunsModule, TeamsModule],
  controllers: [ConnectedWorkersController, HarnessSupportController, WorkerCredentialsController],
  providers: [
    WorkerPresence,
    SelfHostedDispatcher,
    WorkerGateway,
    SelfHostedSweeper,
    WorkerCredentialRepository,
    WorkerCredentialsService,
  ],
})
export class RemoteExecutionApiModule {}
