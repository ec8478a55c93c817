import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import {
  BroadcastCache,
  InvalidationBus,
  optionalBroadcastCache,
} from '../../common/cache/broadcast-cache';
import { Invalidations } from '../../common/cache/invalidations';
import { ApiError } from '../../common/errors/api-error';
import type { Principal } from '../../common/auth/principal';
import { AuditLog } from '../audit';
import { AgentIdentityRepository } from '../identities';
import type { LimitsDto, UpdateLimitsDto } from './limits.dto';
import { RunLimits, TEAM_SCOPE } from './run-limits.entity';
import { RunLimitsRepository } from './run-limits.repository';

/** The limits that govern one run: its team's and its executing agent identity's. */
export interface RunLimitRows {
  team: RunLimits | null;
  agent: RunLimits | null;
}

/** Invalidation topic of a team's limits rows (its own and its agents'), by team id. */
export const RUN_LIMITS_TOPIC = 'run_limits';
const CACHED_SCOPES = 10_000;

const FIELDS = ['max_concurrent_runs', 'monthly_budget_usd', 'max_run_cost_usd'] as const;

export function limitsOf(row: RunLimits | null): LimitsDto {
  return {
    max_concurrent_runs: row?.maxConcurrentRuns ?? null,
    monthly_budget_usd: row?.monthlyBudgetUsd ?? null,
    max_run_cost_usd: row?.maxRunCostUsd ?? null,
  };
}

/** Stores and reads limits; a change and its `limits.update` audit event share one transaction. */
@Injectable()
export class LimitsService {
  private readonly changeListeners: ((teamId: string) => void)[] = [];
  /**
   * The rows read outside transactions (a creation's capacity hint, a model call's budget check)
   * by team and agent; a change drops the team's entries on every replica before it is answered.
   */
  private readonly cached: BroadcastCache<RunLimitRows & { teamId: string }> | null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditLog,
    private readonly identities: AgentIdentityRepository,
    private readonly rows: RunLimitsRepository,
    @Optional() @Inject(Invalidations) private readonly invalidations?: InvalidationBus,
  ) {
    this.cached = optionalBroadcastCache(invalidations, {
      maxEntries: CACHED_SCOPES,
      affects: (rows, change) => change.topic === RUN_LIMITS_TOPIC && rows.teamId === change.id,
    });
  }

  async teamLimits(teamId: string): Promise<LimitsDto> {
    return limitsOf(await this.rows.find(teamId, TEAM_SCOPE));
  }

  async agentLimits(teamId: string, agentUid: string): Promise<LimitsDto> {
    await this.assertAgent(teamId, agentUid);
    return limitsOf(await this.rows.find(teamId, agentUid));
  }

  /** Called after a change of a team's (or its agents') limits has committed. */
  onChanged(listener: (teamId: string) => void): void {
    this.changeListeners.push(listener);
  }

  /** Sets the team's limits (`agentUid` null) or an agent's; omitted fields are kept. */
  async update(
    principal: Principal,
    agentUid: string | null,
    body: UpdateLimitsDto,
  ): Promise<LimitsDto> {
    const { teamId } = principal;
    if (agentUid !== null) await this.assertAgent(teamId, agentUid);
    const scope = agentUid ?? TEAM_SCOPE;
    const updated = await this.dataSource.transaction(async (manager) => {
      await this.rows.ensureLocked(manager, teamId, scope);
      const before = limitsOf(await this.rows.find(teamId, scope, manager, true));
      const after: LimitsDto = { ...before };
      for (const field of FIELDS) {
        const value = body[field];
        if (value !== undefined) after[field] = value;
      }
      if (after.monthly_budget_usd !== null)
        after.monthly_budget_usd = usd(after.monthly_budget_usd);
      if (after.max_run_cost_usd !== null) after.max_run_cost_usd = usd(after.max_run_cost_usd);
      await this.rows.set(manager, teamId, scope, {
        maxConcurrentRuns: after.max_concurrent_runs,
        monthlyBudgetUsd: after.monthly_budget_usd,
        maxRunCostUsd: after.max_run_cost_usd,
      });
      const target = agentUid ? { type: 'agent', id: agentUid } : { type: 'team', id: teamId };
      await this.audit.record(manager, principal, 'limits.update', target, {
        before: { ...before },
        after: { ...after },
      });
      await this.invalidations?.changed(manager, RUN_LIMITS_TOPIC, [teamId]);
      return after;
    });
    for (const listener of this.changeListeners) listener(teamId);
    return updated;
  }

  /**
   * The rows governing a run, read in `manager`'s transaction; `lock` takes them FOR UPDATE (team
   * row first, then the agent's: one statement in key order, so claims never deadlock). Read
   * outside a transaction and without a lock, they may come from the cache. Do not modify them.
   */
  async forRun(
    manager: EntityManager,
    teamId: string,
    executorId: string | null,
    lock: boolean,
  ): Promise<RunLimitRows> {
    if (lock || !this.cached || manager.queryRunner?.isTransactionActive) {
      return this.read(manager, teamId, executorId, lock);
    }
    const rows = await this.cached.get(`${teamId}\u0000${executorId ?? ''}`, async () => ({
      teamId,
      ...(await this.read(manager, teamId, executorId, false)),
    }));
    return { team: rows?.team ?? null, agent: rows?.agent ?? null };
  }

  private async read(
    manager: EntityManager,
    teamId: string,
    executorId: string | null,
    lock: boolean,
  ): Promise<RunLimitRows> {
    const scopes = executorId ? [TEAM_SCOPE, executorId] : [TEAM_SCOPE];
    const rows = await this.rows.ofScopes(manager, teamId, scopes, lock);
    return {
      team: rows.find((r) => r.agentUid === TEAM_SCOPE) ?? null,
      agent: rows.find((r) => r.agentUid !== TEAM_SCOPE) ?? null,
    };
  }

  /** Every limits row of a team (its own and its agents'). */
  allOf(teamId: string): Promise<RunLimits[]> {
    return this.rows.allOf(teamId);
  }

  private async assertAgent(teamId: string, uid: string): Promise<void> {
    const exists = await this.identities.existsLive(teamId, uid);
    if (!exists) throw ApiError.notFound(`agent "${uid}"`);
  }
}

/** Money is stored with 6 decimals. */
function usd(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
