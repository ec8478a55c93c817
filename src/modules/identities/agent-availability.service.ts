import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { TeamsService } from '../teams';

/**
 * The plan limit on agent identities: a team may use as many agents as its own `agent_limit`
 * (or AMBIENT_TEAM_AGENT_LIMIT) allows, counting the oldest ones first. An agent beyond the
 * limit is listed with `available: false` and cannot execute runs; it becomes available again
 * when older agents are deleted or the limit is raised.
 */
@Injectable()
export class AgentAvailability {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly teams: TeamsService,
  ) {}

  async limitFor(teamId: string): Promise<number> {
    return (await this.teams.agentLimit(teamId)) ?? this.config.identities.defaultAgentLimit;
  }

  /** Agents the team has (not deleted). */
  async count(teamId: string, manager: EntityManager = this.dataSource.manager): Promise<number> {
    const rows = (await manager.query(
      `SELECT COUNT(*) AS n FROM agent_identities WHERE team_id = ? AND deleted_at IS NULL`,
      [teamId],
    )) as { n: number | string }[];
    return Number(rows[0]?.n ?? 0);
  }

  /** The uids of the team's usable agents: its oldest `limit` agents that are not deleted. */
  async availableUids(teamId: string): Promise<Set<string>> {
    const limit = await this.limitFor(teamId);
    if (limit === 0) return new Set();
    const rows = (await this.dataSource.query(
      `SELECT user_id FROM agent_identities
        WHERE team_id = ? AND deleted_at IS NULL
        ORDER BY created_at, user_id LIMIT ?`,
      [teamId, limit],
    )) as { user_id: string }[];
    return new Set(rows.map((r) => r.user_id));
  }

  async isAvailable(teamId: string, uid: string): Promise<boolean> {
    return (await this.availableUids(teamId)).has(uid);
  }
}
