import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import type { AgentConfig } from '../run-config';
import { AgentAvailability } from './agent-availability.service';
import type { AgentIdentity } from './agent-identity.entity';
import { IdentitiesService } from './identities.service';
import { withIdentityDefaults } from './identity-run-defaults';

export interface RunExecutor {
  /** The user the run executes as (`executor` on the RunItem). */
  executorId: string | null;
  /** The run config with the executing agent's defaults filled in. */
  config: AgentConfig;
}

/**
 * Decides who executes a new run: the agent named by `agent_identity_uid`, else the creator.
 * An agent (named, or calling with its own key) must exist and be within the team's plan
 * limit; its settings fill the gaps of the run's config.
 */
@Injectable()
export class IdentityRunResolver {
  constructor(
    private readonly identities: IdentitiesService,
    private readonly availability: AgentAvailability,
  ) {}

  async resolve(
    teamId: string,
    creatorId: string | null,
    config: AgentConfig,
    agentIdentityUid?: string,
    creatorMayBeAgent = true,
  ): Promise<RunExecutor> {
    if (agentIdentityUid !== undefined) {
      const agent = await this.identities.findActive(teamId, agentIdentityUid);
      if (!agent) {
        throw ApiError.invalid(
          'agent_identity_uid',
          `unknown agent identity "${agentIdentityUid}" (GET /agent/identities lists the team's agents)`,
        );
      }
      return this.executeAs(agent, config);
    }
    const creatorAgent =
      creatorId && creatorMayBeAgent ? await this.identities.findActive(teamId, creatorId) : null;
    if (creatorAgent) return this.executeAs(creatorAgent, config);
    return { executorId: creatorId, config };
  }

  private async executeAs(agent: AgentIdentity, config: AgentConfig): Promise<RunExecutor> {
    if (!(await this.availability.isAvailable(agent.teamId, agent.uid))) {
      const limit = await this.availability.limitFor(agent.teamId);
      throw new ApiError(
        'not_authorized',
        `agent "${agent.name}" (${agent.uid}) is unavailable: it is beyond the team's plan limit of ` +
          `${limit} agent identit${limit === 1 ? 'y' : 'ies'} (oldest first). Delete an older agent or raise the limit.`,
        { title: 'Agent unavailable' },
      );
    }
    return { executorId: agent.uid, config: withIdentityDefaults(config, agent.settings) };
  }
}
