import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { jsonColumn } from '../../database/json-column';
import { ConversationRuns } from '../artifacts';
import { EnvironmentLatestRun, EnvironmentLatestRuns } from '../environments';
import { SkillLastRuns } from '../skills';
import { Run } from './entities/run.entity';
import type { RequestUsage } from '../run-config';
import { RUN_STATES, RunState, TERMINAL_STATES } from './run-state';

const ENDED = TERMINAL_STATES.map((state) => `'${state}'`).join(', ');
/** Rows of this volume: older rows, kept before volumes were recorded, belong to every volume. */
const ON_VOLUME = '(workspace_volume = ? OR workspace_volume IS NULL)';
/** `true`/`false` as JSON values on both MySQL and MariaDB (MariaDB's JSON_SET would store 1). */
const JSON_TRUE = `JSON_EXTRACT('true', '$')`;
const JSON_FALSE = `JSON_EXTRACT('false', '$')`;

/** A guard on a run row's columns (e.g. an execution's fencing token), as SQL and parameters. */
export interface RowCondition {
  sql: string;
  params: unknown[];
}

/** Where a run's workspace is kept after it ended, if it is. */
export interface KeptWorkspace {
  until: Date | null;
  volume: string | null;
}

/**
 * The `runs` table's statements for the modules around the run lifecycle (execution, workspaces,
 * the debug window, metrics): every read and write of a run row outside src/modules/runs goes
 * through here, so the table's invariants (state machine, fencing columns, retention columns)
 * are kept in one module. `manager` joins a caller's transaction.
 */
@Injectable()
export class RunRecords implements EnvironmentLatestRuns, SkillLastRuns, ConversationRuns {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private db(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  /** Runs per state, every state present (one grouped query on the state index). */
  async countByState(): Promise<Record<string, number>> {
    const rows = (await this.db().query(
      'SELECT state, COUNT(*) AS n FROM runs GROUP BY state',
    )) as { state: string; n: string | number }[];
    const counts: Record<string, number> = Object.fromEntries(RUN_STATES.map((s) => [s, 0]));
    for (const row of rows) counts[row.state] = Number(row.n);
    return counts;
  }

  find(runId: string, manager?: EntityManager): Promise<Run | null> {
    return this.db(manager).getRepository(Run).findOneBy({ id: runId });
  }

  // --- executions: leases and fencing ---

  /** Whether the run's row matches `condition`; `lock` takes a share lock until the commit. */
  async matches(
    manager: EntityManager,
    runId: string,
    condition: RowCondition,
    lock: boolean,
  ): Promise<boolean> {
    const rows = (await manager.query(
      `SELECT 1 FROM runs WHERE id = ? AND ${condition.sql}${lock ? ' LOCK IN SHARE MODE' : ''}`,
      [runId, ...condition.params],
    )) as unknown[];
    return rows.length > 0;
  }

  /**
   * Extends the lease of the execution holding it (`leaseOwner`; `executionId` too when given)
   * while the run is claimed or in progress. False when the lease is no longer held.
   */
  async renewLease(
    runId: string,
    leaseOwner: string,
    until: Date,
    executionId?: number,
  ): Promise<boolean> {
    const byExecution = executionId === undefined ? '' : ' AND execution_count = ?';
    const result = (await this.db().query(
      `UPDATE runs SET lease_expires_at = ? WHERE id = ? AND lease_owner = ?${byExecution}
          AND FIELD(state, 'CLAIMED', 'INPROGRESS') > 0`,
      [until, runId, leaseOwner, ...(executionId === undefined ? [] : [executionId])],
    )) as { affectedRows?: number };
    return (result.affectedRows ?? 0) > 0;
  }

  /** Whether this lease holds the run, claimed or in progress. */
  async leaseHolds(runId: string, leaseOwner: string): Promise<boolean> {
    const run = await this.db()
      .getRepository(Run)
      .findOne({ select: { state: true, leaseOwner: true }, where: { id: runId } });
    return run?.leaseOwner === leaseOwner && ['CLAIMED', 'INPROGRESS'].includes(run.state);
  }

  async requestUsageOf(runId: string): Promise<RequestUsage | null> {
    const [row] = (await this.db().query('SELECT request_usage FROM runs WHERE id = ?', [
      runId,
    ])) as { request_usage: string | RequestUsage | null }[];
    return jsonColumn(row?.request_usage);
  }

  /**
   * Inference spend (USD, as stored in `request_usage` by ended executions) of the team's other
   * runs created since `since`, and of those of them executed by `executorId`.
   */
  async inferenceSpendSince(
    teamId: string,
    executorId: string | null,
    since: Date,
    exceptRunId: string,
  ): Promise<{ team: number; executor: number }> {
    const cost = `COALESCE(JSON_EXTRACT(request_usage, '$.inference_cost_usd') + 0, 0)`;
    const [row] = (await this.db().query(
      `SELECT COALESCE(SUM(${cost}), 0) AS team,
              COALESCE(SUM(CASE WHEN executor_id <=> ? THEN ${cost} ELSE 0 END), 0) AS executor
         FROM runs WHERE team_id = ? AND created_at >= ? AND id <> ?`,
      [executorId, teamId, since, exceptRunId],
    )) as { team: string | number; executor: string | number }[];
    return { team: Number(row?.team ?? 0), executor: Number(row?.executor ?? 0) };
  }

  /** QUEUED runs for Ambient's workers whose job went missing (not updated since `before`). */
  async queuedWithoutWorkerHost(before: Date, limit: number): Promise<string[]> {
    const rows = await this.db()
      .getRepository(Run)
      .createQueryBuilder('r')
      .select('r.id', 'id')
      .where('r.state = :state AND r.updated_at < :before', { state: 'QUEUED', before })
      .andWhere('r.worker_host IS NULL') // self-hosted runs wait in MySQL for their workers
      .andWhere('r.at_capacity = 0') // waiting for a concurrency slot: RunCapacity dispatches
      .orderBy('r.updated_at', 'ASC')
      .limit(limit)
      .getRawMany<{ id: string }>();
    return rows.map((row) => row.id);
  }

  /** Claimed or running runs whose lease lapsed before `now`. */
  lapsedLeases(now: Date, limit: number): Promise<Run[]> {
    return this.db()
      .getRepository(Run)
      .createQueryBuilder('r')
      .select(['r.id', 'r.teamId', 'r.workerHost', 'r.attempt', 'r.executionCount', 'r.leaseOwner'])
      .where('r.state IN (:...states) AND r.lease_expires_at < :now', {
        states: ['CLAIMED', 'INPROGRESS'],
        now,
      })
      .limit(limit)
      .getMany();
  }

  /** The team's runs waiting for this self-hosted worker host, oldest first. */
  queuedForWorkerHost(teamId: string, workerHost: string, limit: number): Promise<Run[]> {
    return this.db()
      .getRepository(Run)
      .find({
        where: { teamId, workerHost, state: 'QUEUED' },
        order: { createdAt: 'ASC', id: 'ASC' },
        take: limit,
      });
  }

  /** Self-hosted offers (PENDING) whose worker did not answer before `now`. */
  lapsedOffers(now: Date, limit: number): Promise<Run[]> {
    return this.db()
      .getRepository(Run)
      .createQueryBuilder('r')
      .select(['r.id', 'r.teamId', 'r.workerHost', 'r.leaseOwner'])
      .where("r.state = 'PENDING' AND r.worker_host IS NOT NULL AND r.lease_expires_at < :now", {
        now,
      })
      .limit(limit)
      .getMany();
  }

  /** Self-hosted runs queued (or unclaimed) since before `before`. */
  unclaimedSince(before: Date, limit: number): Promise<Run[]> {
    return this.db()
      .getRepository(Run)
      .createQueryBuilder('r')
      .select(['r.id', 'r.workerHost'])
      .where("r.state = 'QUEUED' AND r.worker_host IS NOT NULL")
      .andWhere('COALESCE(r.unclaimed_since, r.updated_at) < :before', { before })
      .limit(limit)
      .getMany();
  }

  /** The messages of every run of a conversation, in the order they were recorded. */
  async conversationMessages(
    conversationId: string,
  ): Promise<{ runId: string; message: unknown }[]> {
    const rows = (await this.db().query(
      `SELECT m.run_id, m.message FROM run_messages m JOIN runs r ON r.id = m.run_id
        WHERE r.conversation_id = ? ORDER BY m.id`,
      [conversationId],
    )) as { run_id: string; message: string | Record<string, unknown> }[];
    return rows.map((r) => ({
      runId: r.run_id,
      message: jsonColumn(r.message),
    }));
  }

  // --- kept workspaces (runs.workspace_retained_until, runs.workspace_volume) ---

  async keptWorkspace(runId: string): Promise<KeptWorkspace | null> {
    const rows = (await this.db().query(
      'SELECT workspace_retained_until AS until, workspace_volume AS volume FROM runs WHERE id = ?',
      [runId],
    )) as KeptWorkspace[];
    return rows[0] ?? null;
  }

  async keepWorkspace(runId: string, until: Date, volume: string): Promise<void> {
    await this.db().query(
      'UPDATE runs SET workspace_retained_until = ?, workspace_volume = ? WHERE id = ?',
      [until, volume, runId],
    );
  }

  /** Keeps the workspace of a cancelled execution; false when the run moved on meanwhile. */
  async keepCancelledWorkspace(
    runId: string,
    executionId: number,
    until: Date,
    volume: string,
  ): Promise<boolean> {
    const kept = await this.db()
      .getRepository(Run)
      .update(
        { id: runId, state: 'CANCELLED', executionCount: executionId },
        { workspaceRetainedUntil: until, workspaceVolume: volume },
      );
    return (kept.affected ?? 0) > 0;
  }

  /** Forgets the kept workspace; with `endDebugWindow`, the debug agent flag goes too. */
  async forgetKeptWorkspace(
    runId: string,
    manager?: EntityManager,
    endDebugWindow = false,
  ): Promise<void> {
    const flag = endDebugWindow
      ? `, status_message = JSON_REMOVE(status_message, '$.debug_agent_active')`
      : '';
    await this.db(manager).query(
      `UPDATE runs SET workspace_retained_until = NULL, workspace_volume = NULL${flag}
        WHERE id = ?`,
      [runId],
    );
  }

  /** Ended runs on this volume whose kept workspace is due, earliest first. */
  async expiredKeptWorkspaces(volume: string, now: Date, limit: number): Promise<string[]> {
    const rows = (await this.db().query(
      `SELECT id FROM runs WHERE workspace_retained_until <= ? AND state IN (${ENDED})
          AND ${ON_VOLUME}
        ORDER BY workspace_retained_until LIMIT ${Number(limit)}`,
      [now, volume],
    )) as { id: string }[];
    return rows.map((row) => row.id);
  }

  /** Locks an ended run whose kept workspace on this volume is due (inside `manager`'s transaction). */
  async lockExpiredKeptWorkspace(
    manager: EntityManager,
    runId: string,
    volume: string,
    now: Date,
  ): Promise<{ executionCount: number; until: Date } | null> {
    const rows = (await manager.query(
      `SELECT execution_count AS executionCount, workspace_retained_until AS until FROM runs
        WHERE id = ? AND workspace_retained_until <= ? AND state IN (${ENDED})
          AND ${ON_VOLUME} FOR UPDATE`,
      [runId, now, volume],
    )) as { executionCount: number; until: Date }[];
    return rows[0] ?? null;
  }

  /** Of these run ids, those whose row accounts for a workspace directory on this volume. */
  async accountingForWorkspaces(runIds: string[], volume: string): Promise<Set<string>> {
    const rows = (await this.db().query(
      `SELECT id FROM runs WHERE id IN (?) AND (state NOT IN (${ENDED})
          OR (workspace_retained_until IS NOT NULL AND ${ON_VOLUME}))`,
      [runIds, volume],
    )) as { id: string }[];
    return new Set(rows.map((row) => row.id));
  }

  /** Locks the run's row (inside `manager`'s transaction) and reads its workspace columns. */
  async lockWorkspaceOwner(
    manager: EntityManager,
    runId: string,
  ): Promise<(KeptWorkspace & { state: RunState }) | null> {
    const rows = (await manager.query(
      `SELECT state, workspace_retained_until AS until, workspace_volume AS volume
         FROM runs WHERE id = ? FOR UPDATE`,
      [runId],
    )) as (KeptWorkspace & { state: RunState })[];
    return rows[0] ?? null;
  }

  /**
   * An execution is live while its run is claimed or in progress at that execution with a lease
   * not lapsed (a crashed worker's lapses), or while a debug agent may work in its kept workspace.
   */
  async executionIsLive(runId: string, executionId: number, now: Date): Promise<boolean> {
    const rows = (await this.db().query(
      `SELECT 1 FROM runs WHERE id = ? AND execution_count = ? AND (
         (state IN ('CLAIMED', 'INPROGRESS') AND lease_expires_at > ?)
         OR workspace_retained_until > ?)`,
      [runId, executionId, now, now],
    )) as unknown[];
    return rows.length > 0;
  }

  // --- the debug window of a failed environment setup ---

  /** Sets `debug_agent_active` if the window is open (FAILED setup, workspace still kept). */
  async openDebugAgent(runId: string, now: Date): Promise<boolean> {
    const result = (await this.db().query(
      `UPDATE runs SET status_message = JSON_SET(status_message, '$.debug_agent_active', ${JSON_TRUE})
        WHERE id = ? AND state = 'FAILED' AND workspace_retained_until > ?
          AND JSON_UNQUOTE(JSON_EXTRACT(status_message, '$.error_code')) = 'environment_setup_failed'`,
      [runId, now],
    )) as { affectedRows?: number };
    return (result.affectedRows ?? 0) > 0;
  }

  async closeDebugAgent(runId: string): Promise<void> {
    await this.db().query(
      `UPDATE runs SET status_message = JSON_SET(status_message, '$.debug_agent_active', ${JSON_FALSE})
        WHERE id = ? AND state = 'FAILED'`,
      [runId],
    );
  }

  async inDebugWindow(runId: string, now: Date): Promise<boolean> {
    const rows = (await this.db().query(
      `SELECT 1 AS ok FROM runs WHERE id = ? AND state = 'FAILED' AND workspace_retained_until > ?`,
      [runId, now],
    )) as unknown[];
    return rows.length > 0;
  }

  // --- reads for the modules around runs: conversations, scores, artifacts, environments, skills ---

  /** A run of `teamId`'s team (null: of any team; the caller holds another capability). */
  async findOfTeam(runId: string, teamId: string | null): Promise<Run | null> {
    return this.db()
      .getRepository(Run)
      .findOneBy(teamId ? { id: runId, teamId } : { id: runId });
  }

  /** Whether the team has a run with this id. */
  async exists(runId: string, teamId: string): Promise<boolean> {
    return this.db()
      .getRepository(Run)
      .exists({ where: { id: runId, teamId } });
  }

  /** The team's runs of a conversation, oldest first (empty: no such conversation for the team). */
  async listInConversation(teamId: string, conversationId: string): Promise<Run[]> {
    return this.db()
      .getRepository(Run)
      .find({ where: { conversationId, teamId }, order: { createdAt: 'ASC' } });
  }

  /** A conversation's latest run, of `teamId`'s team when given (null: any team's). */
  async latestInConversation(conversationId: string, teamId: string | null): Promise<Run | null> {
    return this.db()
      .getRepository(Run)
      .findOne({
        where: teamId ? { conversationId, teamId } : { conversationId },
        order: { createdAt: 'DESC', id: 'DESC' },
      });
  }

  /** Whether a run belongs to a conversation. */
  async isInConversation(runId: string, conversationId: string): Promise<boolean> {
    const rows = (await this.db().query(
      'SELECT 1 FROM runs WHERE id = ? AND conversation_id = ? LIMIT 1',
      [runId, conversationId],
    )) as unknown[];
    return rows.length > 0;
  }

  /**
   * The transcripts' rows: the stored messages of the conversation `runId` belongs to (its runs
   * of the run's team), in the order they were stored; empty for an unknown run or none stored.
   */
  async transcriptMessagesOf(runId: string): Promise<TranscriptMessageRow[]> {
    const rows = (await this.db().query(
      `SELECT m.id, m.run_id, m.execution_id, m.created_at, m.message, r.conversation_id
         FROM runs r JOIN runs c ON c.conversation_id = r.conversation_id AND c.team_id = r.team_id
         JOIN run_messages m ON m.run_id = c.id
        WHERE r.id = ? ORDER BY m.id`,
      [runId],
    )) as {
      id: string | number;
      run_id: string;
      execution_id: number;
      created_at: Date;
      message: string | Record<string, unknown>;
      conversation_id: string;
    }[];
    return rows.map((r) => ({
      id: String(r.id),
      runId: r.run_id,
      executionId: r.execution_id,
      createdAt: new Date(r.created_at),
      message: typeof r.message === 'string' ? (JSON.parse(r.message) as unknown) : r.message,
      conversationId: r.conversation_id,
    }));
  }

  /**
   * The team's runs created in [from, to) grouped by `groupBy`, with their tokens and cost summed
   * from the stored `request_usage` (one aggregate query on idx_runs_team_created). Day buckets
   * come in day order, the others by cost, most expensive first.
   */
  async usageBuckets(
    teamId: string,
    from: Date,
    to: Date,
    groupBy: UsageGroupBy,
  ): Promise<UsageBucketRow[]> {
    // Identity and creator keys are user ids (agents are service-account users): their names too.
    const named = groupBy === 'identity' || groupBy === 'creator';
    // Per run first (its model entries' tokens summed), then per bucket: a run counts once.
    const rows = (await this.db().query(
      `SELECT u.bucket_key, COUNT(*) AS runs, SUM(u.prompt) AS prompt_tokens,
              SUM(u.completion) AS completion_tokens, SUM(u.cost) AS cost_usd,
              ${named ? 'MAX(p.display_name)' : 'NULL'} AS name
         FROM (SELECT MAX(${USAGE_KEYS[groupBy]}) AS bucket_key,
                      MAX(COALESCE(JSON_VALUE(r.request_usage, '$.inference_cost_usd'), 0)
                        + COALESCE(JSON_VALUE(r.request_usage, '$.compute_cost_usd'), 0)) AS cost,
                      COALESCE(SUM(t.input), 0) AS prompt, COALESCE(SUM(t.output), 0) AS completion
                 FROM runs r
                 LEFT JOIN JSON_TABLE(r.request_usage, '$.model_token_usage[*]' COLUMNS (
                   input BIGINT PATH '$.tokens_by_category.input' DEFAULT '0' ON EMPTY,
                   output BIGINT PATH '$.tokens_by_category.output' DEFAULT '0' ON EMPTY)) t ON TRUE
                WHERE r.team_id = ? AND r.created_at >= ? AND r.created_at < ?
                GROUP BY r.id) u
        ${named ? 'LEFT JOIN users p ON p.id = u.bucket_key AND p.team_id = ?' : ''}
        GROUP BY u.bucket_key
        ORDER BY ${groupBy === 'day' ? 'u.bucket_key' : 'cost_usd DESC, runs DESC, u.bucket_key'}`,
      [teamId, from, to, ...(named ? [teamId] : [])],
    )) as {
      bucket_key: string | null;
      name: string | null;
      runs: string | number;
      prompt_tokens: string | number;
      completion_tokens: string | number;
      cost_usd: string | number;
    }[];
    return rows.map((row) => ({
      key: row.bucket_key,
      name: row.name,
      runs: Number(row.runs),
      promptTokens: Number(row.prompt_tokens),
      completionTokens: Number(row.completion_tokens),
      costUsd: Math.round(Number(row.cost_usd) * 1e6) / 1e6,
    }));
  }

  /** When the team last started a run of each skill spec (runs without a skill left out). */
  async lastRunBySkillSpec(teamId: string): Promise<Map<string, Date>> {
    const rows = (await this.db().query(
      `SELECT skill_spec, MAX(created_at) AS last FROM runs
        WHERE team_id = ? AND skill_spec IS NOT NULL GROUP BY skill_spec`,
      [teamId],
    )) as { skill_spec: string; last: Date }[];
    return new Map(rows.map((r) => [r.skill_spec, r.last]));
  }

  /** The team's latest run in each of the environments that has one, by environment id. */
  async latestByEnvironment(
    teamId: string,
    environmentIds: string[],
  ): Promise<Map<string, EnvironmentLatestRun>> {
    const latest = new Map<string, EnvironmentLatestRun>();
    for (const environmentId of environmentIds) {
      // One indexed lookup per environment (idx_runs_team_environment); lists are short.
      const [row] = (await this.db().query(
        `SELECT id, title, state, created_at, updated_at, started_at FROM runs
          WHERE team_id = ? AND environment_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`,
        [teamId, environmentId],
      )) as {
        id: string;
        title: string;
        state: RunState;
        created_at: Date;
        updated_at: Date;
        started_at: Date | null;
      }[];
      if (!row) continue;
      latest.set(environmentId, {
        id: row.id,
        title: row.title,
        state: row.state,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
        startedAt: row.started_at,
      });
    }
    return latest;
  }
}

/** What usage is grouped by: the UTC day a run was created, or one of its columns. */
export const USAGE_GROUP_BY = ['day', 'model', 'identity', 'source', 'creator'] as const;
export type UsageGroupBy = (typeof USAGE_GROUP_BY)[number];

/** The bucket key of each grouping, as SQL on `runs r` (identity: whom the run executes as). */
const USAGE_KEYS: Record<UsageGroupBy, string> = {
  day: "DATE_FORMAT(r.created_at, '%Y-%m-%d')",
  model: 'r.model_id',
  identity: 'r.executor_id',
  source: 'r.source',
  creator: 'r.creator_id',
};

/** One bucket of usage: its runs, their tokens and cost (null key: runs without that value). */
export interface UsageBucketRow {
  key: string | null;
  /** The user's or agent's display name, for identity and creator buckets (null otherwise). */
  name: string | null;
  runs: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

/** A stored chat message of a conversation, with the run and execution that stored it. */
export interface TranscriptMessageRow {
  id: string;
  runId: string;
  executionId: number;
  createdAt: Date;
  /** The stored chat message (JSON). */
  message: unknown;
  conversationId: string;
}
