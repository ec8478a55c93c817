import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import {
  claimLost,
  IdempotentAnswer,
  markRecorded,
  recordAnswersInTransaction,
} from '../idempotency';
import { newUuid } from '../../common/ids';
import { AuditEvent, AuditLog } from '../audit';
import { EnvironmentsService } from '../environments';
import { IdentityRunResolver } from '../identities';
import { SkillsService } from '../skills';
import { ModelsService } from '../models';
import { McpSecrets, TeamSecretsService, assertMcpServers, runSecretRefs } from '../secrets';
import { Run } from './entities/run.entity';
import { NewRun } from './new-run';
import { NewRunRepository } from './new-run.repository';
import { AmbientMetrics } from '../metrics';
import { NewRunWriter, RUN_CREATED_EVENT } from './new-run-writer.service';
import { AgentConfig, checkedApprovals, HarnessTypes, ResolvedAgentSkill } from '../run-config';
import { skillName } from './run-item.mapper';
import { assertMetadata } from './run-metadata.rules';
import { RunCapacity } from './run-capacity.service';
import { contentDeletedConflict } from './run-content.repository';
import { RunLookupRepository } from './run-lookup.repository';
import { ConversationRunRepository } from './conversation-run.repository';
import { RunQueue } from './run-queue.service';
import { RunTransitions } from './run-transitions.service';
import { routeWorkerHost } from './worker-host';
import { isDeadlock } from '../../database/mysql-errors';

export const MAX_ORCHESTRATION_DEPTH = 8;
const MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024;
const TITLE_LENGTH = 80;

/**
 * Creates runs: validates what the DTO cannot, commits the run with its metadata, ancestry,
 * attachments and `oz_run_created` event in one transaction (a standalone run shares it with
 * concurrent creations: NewRunWriter), then enqueues it without waiting for the enqueue.
 */
@Injectable()
export class RunCreationService {
  private readonly logger = new Logger('RunCreation');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly models: ModelsService,
    private readonly transitions: RunTransitions,
    private readonly queue: RunQueue,
    private readonly identities: IdentityRunResolver,
    private readonly environments: EnvironmentsService,
    private readonly skills: SkillsService,
    private readonly writer: NewRunWriter,
    private readonly newRuns: NewRunRepository,
    private readonly lookups: RunLookupRepository,
    private readonly conversationRuns: ConversationRunRepository,
    private readonly metrics: AmbientMetrics,
    private readonly mcpSecrets: McpSecrets,
    private readonly harnessTypes: HarnessTypes,
    private readonly audit: AuditLog,
    private readonly capacity: RunCapacity,
    private readonly secrets: TeamSecretsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(input: NewRun): Promise<Run> {
    const config: AgentConfig = { ...(input.config ?? {}) };
    delete config.experimental; // server-filled only
    if (input.skill) config.skill_spec = input.skill;
    if (config.skill_spec && config.skills?.length) {
      throw ApiError.invalid('config.skills', 'cannot be combined with skill_spec');
    }
    let skillSpec = config.skill_spec ?? config.skills?.[0] ?? null;
    let agentSkill: ResolvedAgentSkill | null = null;
    const namedByCaller = Boolean(config.name);
    if (skillSpec && !config.name) config.name = skillName(skillSpec);
    const prompt = input.prompt?.trim() ?? '';
    if (!prompt && !skillSpec && !input.conversationId) {
      throw ApiError.invalid('prompt', 'is required unless a skill or conversation_id is given');
    }
    this.harnessTypes.assertKnown(config.harness?.type, 'config.harness.type');
    if (config.mcp_servers) assertMcpServers(config.mcp_servers);
    config.approvals = checkedApprovals(config.approvals, 'config.approvals');
    if (!config.approvals) delete config.approvals;
    const executor = await this.identities.resolve(
      input.teamId,
      input.creatorId,
      config,
      input.agentIdentityUid,
      input.creatorMayBeAgent ?? true,
    );
    Object.assign(config, executor.config);
    if (config.mcp_servers) {
      config.mcp_servers = await this.mcpSecrets.seal(
        input.teamId,
        config.mcp_servers,
        'config.mcp_servers',
      );
    }
    if (config.environment_id) {
      await this.environments.assertUsable(input.teamId, config.environment_id);
    }
    // A secret limited to other environments, agents or schedules, or a webhook's, is refused
    // here with the field naming it (a schedule's or automation's firing records the refusal).
    await this.secrets.assertRunMay(input.teamId, runSecretRefs(config), {
      environmentId: config.environment_id ?? null,
      executorId: input.executorId ?? executor.executorId,
      scheduleId: input.scheduleInfo?.schedule_id ?? null,
    });
    if (skillSpec && config.environment_id) {
      // The skill's SKILL.md (arguments substituted) becomes the base prompt.
      const field = input.skill
        ? 'skill'
        : config.skill_spec
          ? 'config.skill_spec'
          : 'config.skills';
      const skill = await this.skills.resolve(
        input.teamId,
        config.environment_id,
        skillSpec,
        field,
      );
      skillSpec = skill.id;
      agentSkill = { name: skill.name, description: skill.description, full_path: skill.id };
      if (!namedByCaller) config.name = skill.name;
      const base = SkillsService.basePrompt(skill, prompt);
      config.base_prompt = config.base_prompt ? `${base}\n\n${config.base_prompt}` : base;
    }
    const model = this.models.resolveForRun(config.model_id);
    config.model_id = model.id;
    for (const [i, a] of (input.attachments ?? []).entries()) {
      if (a.data.length > MAX_ATTACHMENT_BYTES) {
        throw ApiError.invalid(
          `attachments[${i}].data`,
          `must be at most ${MAX_ATTACHMENT_BYTES} bytes`,
        );
      }
    }

    const parent = input.parentRunId
      ? await this.visibleParent(input.teamId, input.parentRunId)
      : null;
    const metadata = { ...(parent?.metadata ?? {}), ...(input.metadata ?? {}) };
    assertMetadata(metadata);
    const continued = input.conversationId
      ? await this.visibleConversation(input.teamId, input.conversationId)
      : null;
    const conversationId = input.conversationId || newUuid();

    const route = routeWorkerHost(config.worker_host);
    if ('problem' in route) throw ApiError.invalid('config.worker_host', route.problem);

    const now = new Date();
    const id = input.runId ?? newUuid();
    const run: Run = {
      id,
      teamId: input.teamId,
      creatorId: input.creatorId,
      executorId: input.executorId ?? executor.executorId,
      title: (input.title?.trim() || defaultTitle(prompt, config.name)).slice(0, 255),
      prompt,
      state: 'QUEUED',
      source: parent && input.source === 'API' ? 'ORCHESTRATION' : input.source,
      executionLocation: 'REMOTE',
      mode: input.mode ?? 'normal',
      config,
      configName: config.name ?? null,
      modelId: model.id,
      environmentId: config.environment_id ?? null,
      skillSpec,
      agentSkill,
      scheduleId: input.scheduleInfo?.schedule_id ?? null,
      scheduleInfo: input.scheduleInfo ?? null,
      parentRunId: parent?.id ?? null,
      rootRunId: parent?.rootRunId ?? id,
      depth: parent ? parent.depth + 1 : 0,
      conversationId,
      sessionId: null,
      statusMessage: null,
      requestUsage: null,
      metadata: Object.keys(metadata).length ? metadata : null,
      interactive: input.interactive ?? false,
      executionCount: 0,
      attempt: 0,
      runTimeMs: 0,
      executionStartedAt: null,
      workerHost: route.host,
      unclaimedSince: null,
      atCapacity: false,
      maxCostUsd: input.maxCostUsd === undefined ? null : Math.round(input.maxCostUsd * 1e6) / 1e6,
      leaseOwner: null,
      leaseExpiresAt: null,
      workspaceRetainedUntil: null,
      workspaceVolume: null,
      startedAt: null,
      finishedAt: null,
      contentDeletedAt: null,
      createdAt: now,
      updatedAt: now,
    };

    // A run over the concurrency limit is stored without a job; a freed slot dispatches it.
    run.atCapacity = await this.capacity.atCapacityOnCreate(run);

    // A caller-chosen id may already exist (a retried schedule firing): its duplicate-key error
    // must not fail the other runs of a shared batch.
    const answer: IdempotentAnswer | undefined = input.idempotency && {
      claim: input.idempotency.claim,
      status: input.idempotency.status,
      body: input.idempotency.body(run),
    };
    const event = input.auditBy && this.createdEvent(input.auditBy, run);
    // With the content retention on, a sweep may delete the conversation until the run is in.
    const recheck = continued && this.config.runs.contentRetentionDays > 0 ? continued : null;
    if (parent || input.attachments?.length || input.runId || recheck) {
      const attachments = input.attachments ?? [];
      await this.commitAlone({ run, parent, attachments, answer, event, continued: recheck });
    } else {
      await this.writer.write(run, answer, event);
    }
    this.metrics.runCreated(run.source);
    // Waiting, it is still dispatched when the slots freed while it was being stored.
    if (run.atCapacity) await this.capacity.dispatchWaiting(run.teamId);
    else this.dispatchAfterCommit(run);
    return run;
  }

  /**
   * Hands the committed run to its executors without holding the answer: the run is in MySQL,
   * and a job that is never added (Redis down, this process killed now) is added by the
   * dispatch sweeper (RunSweeper), as a self-hosted run is offered again by its sweeper. The
   * enqueue starts now, in creation order and with the request's trace context.
   */
  private dispatchAfterCommit(run: Run): void {
    this.queue.dispatch(run).catch((err: Error) => {
      this.logger.warn(`run ${run.id} not dispatched (${err.message}); its sweeper will`);
    });
  }

  /**
   * A run with a parent (ancestry rows), attachments, a chosen id or an existing conversation
   * the retention may delete (`continued`: the runs it had when checked): its own transaction,
   * with the answer of its `Idempotency-Key`. A continuation's transaction is tried once more
   * when InnoDB chose it as a deadlock's victim (a sweep that locked the conversation's runs
   * after its insert and before its second look waits for it as it waits for the sweep): the
   * second try answers 409 or goes through.
   */
  private async commitAlone(commit: LoneCommit): Promise<void> {
    const attempts = commit.continued ? 2 : 1;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.commitAloneOnce(commit);
        return;
      } catch (err) {
        if (attempt >= attempts || !isDeadlock(err)) throw err;
        this.logger.warn(
          `run ${commit.run.id}: its creation was a deadlock's victim; trying once more`,
        );
      }
    }
  }

  private async commitAloneOnce(commit: LoneCommit): Promise<void> {
    const { run, parent, attachments, answer, event, continued } = commit;
    await this.dataSource.transaction(async (manager) => {
      if (answer && (await recordAnswersInTransaction(manager, [answer])).size) {
        throw claimLost(answer.claim);
      }
      await this.newRuns.insert(manager, run, parent);
      // A retention sweep that deleted the conversation after visibleConversation's check, while
      // this insert waited for its locks, has committed its mark by now: the run is refused and
      // rolled back instead of starting without the history.
      if (continued && (await this.conversationRuns.anyContentDeleted(manager, continued))) {
        throw conversationDeletedConflict(run.conversationId);
      }
      if (attachments.length) {
        await this.newRuns.insertAttachments(
          manager,
          attachments.map((a) => ({
            id: newUuid(),
            runId: run.id,
            fileName: a.fileName,
            mimeType: a.mimeType,
            sizeBytes: a.data.length,
            data: a.data,
            createdAt: run.createdAt,
          })),
        );
      }
      await this.transitions.appendEvent(manager, run.id, RUN_CREATED_EVENT, {
        occurredAt: run.createdAt,
        payload: { source: run.source },
      });
      if (event) await this.audit.insert(manager, [event]);
    });
    if (answer) markRecorded([answer]);
  }

  private createdEvent(by: NonNullable<NewRun['auditBy']>, run: Run): AuditEvent {
    return this.audit.entry(
      by,
      'run.create',
      { type: 'run', id: run.id },
      {
        title: run.title,
        source: run.source,
        ...(run.parentRunId ? { parent_run_id: run.parentRunId } : {}),
        ...(run.environmentId ? { environment_id: run.environmentId } : {}),
        ...(run.executorId && run.executorId !== run.creatorId
          ? { executor_id: run.executorId }
          : {}),
      },
    );
  }

  private async visibleParent(teamId: string, parentRunId: string): Promise<Run> {
    const parent = await this.lookups.findOfTeam(parentRunId, teamId);
    if (!parent) throw ApiError.invalid('parent_run_id', `run "${parentRunId}" does not exist`);
    if (parent.depth + 1 > MAX_ORCHESTRATION_DEPTH) {
      throw ApiError.invalid(
        'parent_run_id',
        `the maximum orchestration depth of ${MAX_ORCHESTRATION_DEPTH} would be exceeded`,
      );
    }
    return parent;
  }

  /** The runs of a conversation the team has and the retention did not delete. */
  private async visibleConversation(teamId: string, conversationId: string): Promise<string[]> {
    const runs = await this.conversationRuns.runsOf(conversationId);
    if (!runs.some((r) => r.teamId === teamId)) {
      throw ApiError.notFound(`conversation "${conversationId}"`);
    }
    if (runs.some((r) => r.contentDeleted)) throw conversationDeletedConflict(conversationId);
    return runs.map((r) => r.id);
  }
}

/** What a run committed in a transaction of its own is written with. */
interface LoneCommit {
  run: Run;
  parent: Run | null;
  attachments: NonNullable<NewRun['attachments']>;
  answer: IdempotentAnswer | undefined;
  event: AuditEvent | undefined;
  /** The conversation's runs its first check saw, looked at again after the insert. */
  continued: string[] | null;
}

function conversationDeletedConflict(conversationId: string): ApiError {
  return contentDeletedConflict(
    `conversation_id: the conversation "${conversationId}"`,
    'there is nothing to continue (start a new conversation)',
    'The conversation has nothing to continue.',
  );
}

function defaultTitle(prompt: string, name: string | undefined): string {
  const firstLine =
    prompt
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? '';
  if (!firstLine) return name ?? 'Agent run';
  return firstLine.length > TITLE_LENGTH ? `${firstLine.slice(0, TITLE_LENGTH - 1)}…` : firstLine;
}
