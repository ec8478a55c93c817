import { Injectable } from '@nestjs/common';
import type { EgressDecision } from '../../../common/egress/egress-policy';
import type { Environment } from '../../environments';
import {
  ApprovalRule,
  ApprovalRuleError,
  combineApprovalRules,
  parseApprovalRules,
} from '../../run-config';
import type { Run } from '../../runs';
import { RunApprovalRepository } from '../../runs';
import { IdentityApprovals } from '../../identities';
import { ExecutionFence, ExecutionToken } from '../execution-fence';
import type { LeaseToken } from '../execution-lease';
import type { ApprovalGate, RecordedApproval } from '../harness/harness.types';
import { hostPort } from '../sandbox/egress-proxy/egress-decisions';
import { EgressRefusals } from './egress-refusals';

/** A stored rule list that no longer parses; the message names where (`the environment's approvals.0.command: …`). */
export class StoredApprovalRuleError extends Error {}

/** What people decided about a run's egress requests: hosts allowed for the rest of the run, and refused. */
export interface EgressDecisions {
  /** `host:port`, as an egress_allow rule: added to the run's allowlist. */
  approved: string[];
  /** `host:port` keys a person denied: not asked about again. */
  denied: Set<string>;
}

/** What an execution prepares of its approvals before its sandbox opens. */
export interface PreparedApprovals {
  gate: ApprovalGate;
  /** `host:port` rules the execution's egress proxy adds to the environment's allowlist. */
  approvedHosts: string[];
  onEgressDecision?: (decision: EgressDecision) => void;
}

/**
 * The approval side of Ambient's own executions: the run's effective rules (its environment's,
 * its agent identity's and its own `config.approvals` together: a source can only add rules),
 * the requests of earlier executions, and taking a decision for this execution, fenced.
 */
@Injectable()
export class ExecutionApprovals {
  constructor(
    private readonly approvals: RunApprovalRepository,
    private readonly identities: IdentityApprovals,
    private readonly fence: ExecutionFence,
  ) {}

  /**
   * The rules as they are stored now (an environment or identity changed while the run waited
   * applies to its next execution). Throws StoredApprovalRuleError for a stored rule that does
   * not parse: the execution fails rather than run without it.
   */
  async rulesFor(
    run: Pick<Run, 'teamId' | 'executorId' | 'config'>,
    environment: Pick<Environment, 'config'> | null,
  ): Promise<ApprovalRule[]> {
    const identity = run.executorId
      ? await this.identityApprovals(run.teamId, run.executorId)
      : undefined;
    return combineApprovalRules(
      parsed((environment?.config as { approvals?: unknown } | undefined)?.approvals, {
        field: 'approvals',
        owner: "the environment's",
      }),
      parsed(identity, { field: 'approvals', owner: "the agent identity's" }),
      parsed(run.config.approvals, { field: 'config.approvals', owner: "the run's" }),
    );
  }

  /**
   * Everything an execution of Ambient's workers needs: its gate, the hosts people approved (its
   * proxy's allowlist gains them), and the proxy's listener that collects refused hosts when a
   * rule asks about them. Throws StoredApprovalRuleError (see rulesFor).
   */
  async prepare(
    run: Run,
    token: LeaseToken,
    environment: Pick<Environment, 'config'> | null,
  ): Promise<PreparedApprovals> {
    const rules = await this.rulesFor(run, environment);
    const egress = mayFindRequests(token)
      ? await this.egressDecisions(run.id)
      : { approved: [], denied: new Set<string>() };
    const asksEgress = rules.some((rule) => 'egress' in rule && rule.effect === 'ask');
    const refusals = asksEgress ? new EgressRefusals(egress.denied) : null;
    return {
      gate: this.gate(token, rules, refusals),
      approvedHosts: egress.approved,
      ...(refusals ? { onEgressDecision: refusals.record } : {}),
    };
  }

  /** The gate a harness asks (HarnessContext.approvals); `egress` when a rule asks about hosts. */
  gate(token: LeaseToken, rules: ApprovalRule[], egress: EgressRefusals | null): ApprovalGate {
    return {
      rules,
      untaken: async () => (mayFindRequests(token) ? this.untaken(token.runId) : []),
      take: (id) => this.take(token, id),
      ...(egress ? { unlistedEgress: () => egress.take() } : {}),
    };
  }

  /** Requests of the run no execution has taken yet, oldest first. */
  async untaken(runId: string): Promise<RecordedApproval[]> {
    const rows = await this.approvals.untaken(runId);
    return rows.map((row) => ({
      id: row.id,
      kind: row.kind,
      tool: row.tool,
      toolCallId: row.toolCallId,
      arguments: row.arguments,
      rule: row.rule,
      summary: row.summary,
      decision: row.decision,
      comment: row.comment,
      decidedBy: row.decidedBy?.name ?? null,
    }));
  }

  /**
   * Marks a decided request as taken by this execution: one UPDATE that only a request nobody
   * took matches, in a transaction that holds the token current (see ExecutionFence). True once;
   * false for every later or stale attempt, so an approved call is never started twice.
   */
  take(token: LeaseToken, id: string): Promise<boolean> {
    return this.fence.write(token, 'approval', (manager) =>
      this.approvals.take(manager, token.runId, id, token.executionId),
    );
  }

  /**
   * The tool calls that wait for a decision or for an execution to take one (the conversation
   * keeps them open), and whether a request nobody decided is among them.
   */
  async awaiting(token: ExecutionToken): Promise<{ callIds: Set<string>; undecided: boolean }> {
    const rows = mayFindRequests(token) ? await this.approvals.awaiting(token.runId) : [];
    return {
      callIds: new Set(rows.flatMap((row) => (row.toolCallId ? [row.toolCallId] : []))),
      undecided: rows.some((row) => row.decision === null),
    };
  }

  /** The run's decided egress requests. */
  async egressDecisions(runId: string): Promise<EgressDecisions> {
    const rows = await this.approvals.egressRequests(runId);
    const decisions: EgressDecisions = { approved: [], denied: new Set() };
    for (const row of rows) {
      const { host, port } = row.arguments as { host?: unknown; port?: unknown };
      if (typeof host !== 'string' || !Number.isInteger(port)) continue;
      const key = hostPort(host, port as number);
      if (row.decision === 'approve') decisions.approved.push(key);
      if (row.decision === 'deny') decisions.denied.add(key);
    }
    return decisions;
  }

  private async identityApprovals(teamId: string, identityId: string): Promise<unknown> {
    return this.identities.ofUser(teamId, identityId);
  }
}

/**
 * Whether an execution can find approval requests: only executions make them (RunBlocking, guarded
 * on the execution's own count, which only ever grows), so the first execution of a run, holding
 * its lease (Ambient's worker or a self-hosted one's), finds none and reads none (three statements
 * of a run's execution). A token without a lease (the debug agent's, a run key's) reads.
 */
function mayFindRequests(token: ExecutionToken): boolean {
  return token.executionId > 1 || typeof token.holder !== 'object';
}

function parsed(input: unknown, where: { field: string; owner: string }): ApprovalRule[] {
  if (input === undefined || input === null) return [];
  try {
    return parseApprovalRules(input, where.field);
  } catch (err) {
    if (!(err instanceof ApprovalRuleError)) throw err;
    throw new StoredApprovalRuleError(`${where.owner} ${err.message}`);
  }
}
