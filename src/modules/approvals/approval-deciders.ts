import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/principal';
import { refusalOf } from '../../common/auth/roles';
import { AgentIdentityRepository, namesApprover } from '../identities';

/** An agent identity that names who may decide its runs' requests. */
export interface NamedApprovers {
  agentName: string;
  approvers: string[];
}

/**
 * Who may decide a run's requests: members and admins (people, never an agent's key); when the
 * agent identity the run executes as names `approvers`, only they and the team's admins. A
 * deleted identity's list still holds for the runs it executed.
 */
@Injectable()
export class ApprovalDeciders {
  constructor(private readonly identities: AgentIdentityRepository) {}

  /** The approvers the runs' executors name, by executor id (executors naming none left out). */
  async approversOf(
    teamId: string,
    executorIds: (string | null)[],
  ): Promise<Map<string, NamedApprovers>> {
    const ids = [...new Set(executorIds.filter((id): id is string => !!id))];
    if (ids.length === 0) return new Map();
    const identities = await this.identities.findByUids(teamId, ids);
    return new Map(
      identities
        .filter((identity) => identity.settings.approvers?.length)
        .map((identity) => [
          identity.uid,
          { agentName: identity.name, approvers: identity.settings.approvers! },
        ]),
    );
  }

  /** Why the caller may not decide the requests of a run executed by `executorId`, or null. */
  refusal(
    principal: Principal,
    executorId: string | null,
    named: Map<string, NamedApprovers>,
  ): string | null {
    const byRole = refusalOf(principal, 'approvals.decide');
    if (byRole) return byRole;
    const policy = executorId ? named.get(executorId) : undefined;
    if (!policy || principal.role === 'admin') return null;
    if (namesApprover(policy.approvers, principal)) return null;
    return (
      `agent "${policy.agentName}" names who may decide its runs' requests ` +
      `(${policy.approvers.join(', ')}) and team admins; you are not one of them`
    );
  }
}
