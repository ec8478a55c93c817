import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { jsonColumn } from '../../database/json-column';
import type { RequestUsage } from '../run-config';
import { TeamUserRepository } from '../teams';
import { Run } from './entities/run.entity';
import { SqlRepository } from '../../database/sql-repository';

/** What runs spent (`runs.request_usage`): a run's, a team's since a date, usage buckets. */
@Injectable()
export class RunUsageRepository extends SqlRepository {
  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly users: TeamUserRepository,
  ) {
    super(dataSource);
  }

  async requestUsageOf(runId: string): Promise<RequestUsage | null> {
    const [row] = (await this.db().query('SELECT request_usage FROM runs WHERE id = ?', [
      runId,
    ])) as { request_usage: string | RequestUsage | null }[];
    return jsonColumn(row?.request_usage);
  }

  /**
   * Stores what a cancelled execution cost: only while the run is CANCELLED at that execution
   * (a run continued or taken over since is not touched). Whether it did.
   */
  async recordCancelledUsage(
    execution: { runId: string; executionId: number },
    usage: Run['requestUsage'],
  ): Promise<boolean> {
    const result = await this.dataSource
      .getRepository(Run)
      .update(
        { id: execution.runId, state: 'CANCELLED', executionCount: execution.executionId },
        { requestUsage: usage },
      );
    return Boolean(result.affected);
  }

  /**
   * Inference spend (USD, as stored in `request_usage` by ended executions) of the team's runs
   * created since `since` (but `exceptRunId`, when given), and of those of them executed by
   * `executorId`: what `monthly_budget_usd` counts.
   */
  async inferenceSpendSince(
    teamId: string,
    executorId: string | null,
    since: Date,
    exceptRunId?: string,
  ): Promise<{ team: number; executor: number }> {
    const cost = `COALESCE(JSON_EXTRACT(request_usage, '$.inference_cost_usd') + 0, 0)`;
    const [row] = (await this.db().query(
      `SELECT COALESCE(SUM(${cost}), 0) AS team,
              COALESCE(SUM(CASE WHEN executor_id <=> ? THEN ${cost} ELSE 0 END), 0) AS executor
         FROM runs WHERE team_id = ? AND created_at >= ?${exceptRunId ? ' AND id <> ?' : ''}`,
      [executorId, teamId, since, ...(exceptRunId ? [exceptRunId] : [])],
    )) as { team: string | number; executor: string | number }[];
    return { team: Number(row?.team ?? 0), executor: Number(row?.executor ?? 0) };
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
    // Per run first (its model entries' tokens summed), then per bucket: a run counts once.
    const rows = (await this.db().query(
      `SELECT u.bucket_key, COUNT(*) AS runs, SUM(u.prompt) AS prompt_tokens,
              SUM(u.completion) AS completion_tokens, SUM(u.cost) AS cost_usd
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
        GROUP BY u.bucket_key
        ORDER BY ${groupBy === 'day' ? 'u.bucket_key' : 'cost_usd DESC, runs DESC, u.bucket_key'}`,
      [teamId, from, to],
    )) as {
      bucket_key: string | null;
      runs: string | number;
      prompt_tokens: string | number;
      completion_tokens: string | number;
      cost_usd: string | number;
    }[];
    // Identity and creator keys are user ids (agents are service-account users): their names too,
    // from the teams module's users.
    const named = groupBy === 'identity' || groupBy === 'creator';
    const names = named
      ? await this.users.displayNames(
          teamId,
          rows.flatMap((row) => (row.bucket_key === null ? [] : [row.bucket_key])),
        )
      : new Map<string, string>();
    return rows.map((row) => ({
      key: row.bucket_key,
      name: (row.bucket_key === null ? undefined : names.get(row.bucket_key)) ?? null,
      runs: Number(row.runs),
      promptTokens: Number(row.prompt_tokens),
      completionTokens: Number(row.completion_tokens),
      costUsd: Math.round(Number(row.cost_usd) * 1e6) / 1e6,
    }));
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
