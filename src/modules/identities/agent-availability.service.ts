import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { TeamsService } from '../teams';
import { AgentIdentityRepository } from './agent-identity.repository';

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
    private readonly identities: AgentIdentityRepository,
    private readonly teams: TeamsService,
  ) {}

  async limitFor(teamId: string): Promise<number> {
    return (await this.teams.agentLimit(teamId)) ?? this.config.identities.defaultAgentLimit;
  }

  /** Agents the team has (not deleted). */
  count(teamId: string, manager?: EntityManager): Promise<number> {
    return this.identities.countLive(teamId, manager);
  }

  /** The uids of the team's usable agents: its oldest `limit` agents that are not deleted. */
  async availableUids(teamId: string): Promise<Set<string>> {
    const limit = await this.limitFor(teamId);
    if (limit === 0) return new Set();
    return new Set(await this.identities.oldestLiveUserIds(teamId, limit));
  }

  async isAvailable(teamId: string, uid: string): Promise<boolean> {
    return (await this.availableUids(teamId)).has(uid);
  }
}
