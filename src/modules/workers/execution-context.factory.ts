import { Inject, Injectable } from '@nestjs/common';
import type { JsonObject } from '../../common/json';
import { API_PREFIX } from '../../config/api-prefix';
import { newUid } from '../../common/ids';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { parseArtifactInput, ArtifactWriter } from '../artifacts';
import type { RunArtifact } from '../artifacts';
import { ChatMessage, HarnessContext } from './harness/harness.types';
import { RunSecretsService } from './execution-secrets.service';
import { WorkspaceService } from './workspace/workspace.service';
import { CatalogModel } from '../models';
import type { Sandbox } from './sandbox/sandbox.types';
import { secretRunContextOf, TeamSecretsService } from '../secrets';
import {
  FollowupAnnouncements,
  type FollowupWatch,
  Run,
  RunAttachment,
  RunFollowupsService,
  RunKeysService,
  withoutRequestId,
  ConversationRunRepository,
  RunAttachmentRepository,
} from '../runs';
import type { ExecutionConfig } from '../run-config';
import { ExecutionApprovals } from './approvals/execution-approvals.service';
import { closeDanglingToolCalls } from './conversation-history';
import { ExecutionFence, ExecutionToken } from './execution-fence';
import { initialPrompt } from './initial-prompt';
import { ExecutionTimeline, type RecordedEvent } from './harness/execution-timeline';

/** What an execution starts from, wherever it runs (here or on a self-hosted worker). */
export interface ExecutionInputs {
  /** Stored messages of the whole conversation so far, dangling tool calls answered. */
  history: ChatMessage[];
  /** True when the run has no messages yet: the execution starts with the prompt. */
  firstExecution: boolean;
  /** The run's attachments, for the first execution only. */
  attachments: RunAttachment[];
  /** Follow-ups not delivered yet, now claimed by this execution. */
  followups: string[];
}

/** Assembles what a harness needs for one execution: workspace, conversation so far, new turns. */
@Injectable()
export class ExecutionContextFactory {
  private readonly timelines = new WeakMap<ExecutionToken, ExecutionTimeline>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly attachments: RunAttachmentRepository,
    private readonly records: ConversationRunRepository,
    private readonly workspaces: WorkspaceService,
    private readonly followups: RunFollowupsService,
    private readonly artifacts: ArtifactWriter,
    private readonly runKeys: RunKeysService,
    private readonly secrets: TeamSecretsService,
    private readonly runSecrets: RunSecretsService,
    private readonly fence: ExecutionFence,
    private readonly approvals: ExecutionApprovals,
    private readonly followupAnnouncements: FollowupAnnouncements,
  ) {}

  async build(
    run: Run,
    /** The execution's fencing token: every write below is refused once it is stale. */
    token: ExecutionToken,
    model: CatalogModel,
    signal: AbortSignal,
    /** The execution's sandbox, open for as long as the harness runs. */
    sandbox: Sandbox,
    /** The run's secrets as variables, when the caller has resolved them already. */
    secretEnv?: Record<string, string>,
    /** The run's config with MCP values revealed, when the caller has resolved it already. */
    config?: ExecutionConfig,
  ): Promise<HarnessContext> {
    const { executionId } = token;
    const followupWatch = this.followupAnnouncements.watch(run.id);
    const { history, firstExecution, attachments, followups } = await this.loadInputs(
      run,
      token,
      followupWatch,
    );
    const workspace = await this.workspaces.prepare(run.id, attachments, sandbox);
    const userMessages: string[] = [];
    if (firstExecution) userMessages.push(initialPrompt(run, workspace.attachmentPaths));
    userMessages.push(...followups);
    const { runs } = this.config;
    return {
      runId: run.id,
      executionId,
      teamId: run.teamId,
      model,
      config: config ?? (await this.runSecrets.executionConfig(run)),
      mode: run.mode,
      history,
      userMessages,
      workspaceDir: workspace.dir,
      sandbox,
      commandEnv: this.workspaces.commandEnv(
        sandbox,
        run.id,
        await this.runKeyEnv(run, executionId, sandbox),
        secretEnv ?? (await this.runSecrets.resolve(run)).env,
      ),
      limits: {
        maxTurns: runs.maxTurns,
        deadline: Date.now() + runs.maxRunSeconds * 1000,
        commandTimeoutSeconds: runs.commandTimeoutSeconds,
      },
      signal,
      takeFollowups: () => this.takeFollowups(token, followupWatch),
      recordMessage: (message) => this.recordMessage(token, message),
      reportArtifact: async (report) => {
        const artifact = await this.reportArtifact(run, token, report);
        return { artifactUid: artifact.id };
      },
      emitEvent: (eventType, payload) => this.emitEvent(token, eventType, payload),
      holdEvents: () => this.holdEvents(token),
      teamSecret: (name) => this.secrets.revealForRun(run.teamId, name, secretRunContextOf(run)),
    };
  }

  /**
   * The execution's run-scoped key and the API address, for commands that report over HTTP
   * (artifacts, a judge's scores). The key stops working when the execution ends.
   */
  private async runKeyEnv(
    run: Run,
    executionId: number,
    sandbox: Sandbox,
  ): Promise<Record<string, string>> {
    if (!run.executorId && !run.creatorId) return {}; // nobody for the key to act as
    const key = await this.runKeys.issue(run, executionId, newUid());
    const apiUrl = sandbox.apiUrl ?? internalApiUrl(this.config);
    return { AMBIENT_API_URL: apiUrl, AMBIENT_RUN_KEY: key, WARP_API_KEY: key };
  }

  async loadInputs(
    run: Run,
    token: ExecutionToken,
    followupWatch?: FollowupWatch,
  ): Promise<ExecutionInputs> {
    const stored = await this.records.conversationMessages(run.conversationId);
    // Calls that wait for a person's decision stay open for the harness to answer.
    const awaiting = await this.approvals.awaiting(token);
    const history = closeDanglingToolCalls(
      stored.map(({ message }) => withoutRequestId(message as ChatMessage)),
      awaiting.callIds,
    );
    const firstExecution = !stored.some((row) => row.runId === run.id);
    const attachments = firstExecution ? await this.attachments.forRun(run.id) : [];
    // An execution that will block again at once leaves them for the one that resumes the run.
    const followups = awaiting.undecided ? [] : await this.takeFollowups(token, followupWatch);
    return { history, firstExecution, attachments, followups };
  }

  /*
   * The writes of an execution to its run, each fenced by its token (see ExecutionFence): the
   * harness, a self-hosted worker and the debug agent all write through these.
   */

  /** Stores one message of the conversation, as the agent loop produces it. */
  recordMessage(token: ExecutionToken, message: ChatMessage): Promise<void> {
    return this.recordMessages(token, [message]);
  }

  /** Stores messages of the conversation in order, all or none. */
  recordMessages(token: ExecutionToken, messages: ChatMessage[]): Promise<void> {
    return this.fence.appendMessages(token, messages as unknown as JsonObject[]);
  }

  /**
   * Claims the run's undelivered follow-ups for the execution. Most turns find none: the watch
   * (an execution of this process's) says so without a read, else an unlocked read without a
   * transaction. A follow-up committed just after it is taken at the next turn, or, at the
   * execution's end, sends the run back to the queue (`requeueForFollowups`).
   */
  async takeFollowups(token: ExecutionToken, watch?: FollowupWatch): Promise<string[]> {
    if (watch && !watch()) return [];
    if (!(await this.followups.hasUndelivered(token.runId))) return [];
    return this.fence.write(token, 'followups', (manager) =>
      this.followups.takeUndelivered(token.runId, token.executionId, manager),
    );
  }

  /**
   * Adds an event to the run's timeline, after the execution's earlier ones (ExecutionTimeline:
   * held with them while a command holds them).
   */
  emitEvent(
    token: ExecutionToken,
    eventType: string,
    payload?: Record<string, unknown> | null,
  ): Promise<void> {
    return this.timelineOf(token).emit(eventType, payload ?? undefined);
  }

  /**
   * Adds events dated already (a self-hosted worker's, whose own timeline ordered and held them)
   * in one fenced write.
   */
  recordEvents(token: ExecutionToken, events: RecordedEvent[]): Promise<void> {
    return this.writeEvents(token, events);
  }

  /** Holds the execution's timeline events until the returned function (or the hold's end). */
  holdEvents(token: ExecutionToken): () => Promise<void> {
    return this.timelineOf(token).hold();
  }

  /** The execution's timeline writer: one per token, gone with it. */
  private timelineOf(token: ExecutionToken): ExecutionTimeline {
    let timeline = this.timelines.get(token);
    if (!timeline) {
      timeline = new ExecutionTimeline((events) => this.writeEvents(token, events));
      this.timelines.set(token, timeline);
    }
    return timeline;
  }

  private writeEvents(token: ExecutionToken, events: RecordedEvent[]): Promise<void> {
    return this.fence.appendEvents(
      token,
      events.map(({ eventType, payload, occurredAt }) => ({
        eventType,
        payload: (payload ?? null) as JsonObject | null,
        occurredAt,
      })),
    );
  }

  /** Records an artifact the execution reports (validated as `parseArtifactInput` says). */
  reportArtifact(
    run: Pick<Run, 'id' | 'teamId'>,
    token: ExecutionToken,
    report: unknown,
  ): Promise<RunArtifact> {
    return this.artifacts.report(run, parseArtifactInput(report), (insert) =>
      this.fence.write(token, 'artifact', insert),
    );
  }
}

/** Where this process's workers reach the API (`AMBIENT_INTERNAL_API_URL`, see AppConfig). */
export function internalApiUrl(config: AppConfig): string {
  return (
    config.server.internalApiUrl ?? `${config.server.publicUrl.replace(/\/+$/, '')}/${API_PREFIX}`
  ).replace(/\/+$/, '');
}
