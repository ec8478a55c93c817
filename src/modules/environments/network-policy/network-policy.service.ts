import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { Principal } from '../../../common/auth/principal';
import { AuditLog } from '../../audit';
import type { NetworkPolicy } from '../environment-config';
import type { NetworkPolicyDto, UpdateNetworkPolicyDto } from './network-policy.dto';
import { TeamNetworkPolicy } from './team-network-policy.entity';
import { TeamNetworkPolicyRepository } from './team-network-policy.repository';

/** Why open egress is refused: the same words on an environment's save and on a run's start. */
export const OPEN_EGRESS_FORBIDDEN =
  'an admin of the team forbade open egress (network "egress"); use network "allowlist" with ' +
  'the hosts the runs need in egress_allow, or network "none"';

/** A team's network policy (GET/PUT /network-policy); a change is audited (`network_policy.update`). */
@Injectable()
export class NetworkPolicyService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly policies: TeamNetworkPolicyRepository,
    private readonly audit: AuditLog,
  ) {}

  async get(teamId: string, manager?: EntityManager) {
    return policyOf(await this.policies.find(teamId, manager));
  }

  async update(principal: Principal, body: UpdateNetworkPolicyDto): Promise<NetworkPolicyDto> {
    const { teamId } = principal;
    return this.dataSource.transaction(async (manager) => {
      const row = await this.policies.lockCreating(manager, teamId);
      const before = policyOf(row);
      const after: NetworkPolicyDto = {
        egress_open_allowed: body.egress_open_allowed ?? before.egress_open_allowed,
      };
      await this.policies.setEgressOpenAllowed(manager, teamId, after.egress_open_allowed);
      await this.audit.record(
        manager,
        principal,
        'network_policy.update',
        { type: 'team', id: teamId },
        { before: { ...before }, after: { ...after } },
      );
      return after;
    });
  }

  /**
   * Why a sandbox of the team may not have `network` (the environment's, or the server's default
   * when it sets none), or null when it may. The run executor calls it before opening a sandbox.
   */
  async networkRefusal(
    teamId: string,
    network: NetworkPolicy,
    manager?: EntityManager,
  ): Promise<string | null> {
    if (network !== 'egress') return null;
    const { egress_open_allowed } = await this.get(teamId, manager);
    return egress_open_allowed ? null : OPEN_EGRESS_FORBIDDEN;
  }
}

function policyOf(row: TeamNetworkPolicy | null): NetworkPolicyDto {
  return { egress_open_allowed: row?.egressOpenAllowed ?? true };
}
