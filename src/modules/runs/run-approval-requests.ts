import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { AuditBy } from '../audit';
import { ApprovalDecider, ApprovalDecision, RunApproval } from './entities/run-approval.entity';
import { RunApprovalRepository } from './run-approval.repository';

/** A decision to write: what, why (a deny's reason, a question's answer) and by whom. */
export interface ApprovalDecisionInput {
  decision: ApprovalDecision;
  comment: string | null;
  by: ApprovalDecider;
}

/**
 * Told, in the deciding transaction, about every request that was just decided (whoever decided
 * it: a person, a follow-up, a cancel, the blocked timeout): the `approval.decided` notification.
 */
export type DecidedListener = (decided: RunApproval, manager: EntityManager) => Promise<void>;

/** The decider of an authenticated caller or of an actor acting for a team. */
export function deciderOf(by: AuditBy): ApprovalDecider {
  if ('actor' in by) {
    return { type: 'system', id: by.actor.id, name: by.actor.name ?? 'Ambient' };
  }
  const type = by.userType === 'service_account' ? 'agent' : 'user';
  return { type, id: by.userId, name: by.displayName };
}

/**
 * The requests of a run for a person (`run_approvals`): the one place that decides them. A
 * decision is a guarded UPDATE (`decision IS NULL`), so a request is decided once whoever races
 * for it; callers hold the run's row lock so that the decision and the run's next state commit
 * together.
 */
@Injectable()
export class RunApprovalRequests {
  private readonly listeners: DecidedListener[] = [];

  constructor(private readonly approvals: RunApprovalRepository) {}

  onDecided(listener: DecidedListener): void {
    this.listeners.push(listener);
  }

  /** The run's requests, oldest first. */
  list(runId: string): Promise<RunApproval[]> {
    return this.approvals.list(runId);
  }

  find(runId: string, approvalId: string, manager?: EntityManager): Promise<RunApproval | null> {
    return this.approvals.find(runId, approvalId, manager);
  }

  /**
   * Decides one request in `manager`'s transaction; the decided row, or null when it was decided
   * already (by someone who came first) or does not exist.
   */
  async decide(
    manager: EntityManager,
    runId: string,
    approvalId: string,
    input: ApprovalDecisionInput,
    at = new Date(),
  ): Promise<RunApproval | null> {
    const decided = await this.approvals.decide(manager, runId, approvalId, input, at);
    if (!decided) return null;
    for (const listener of this.listeners) await listener(decided, manager);
    return decided;
  }

  /**
   * Decides every undecided request of the run as `decisionFor` says (a follow-up answering, a
   * cancel or the timeout denying), in `manager`'s transaction; returns the decided rows.
   */
  async decidePending(
    manager: EntityManager,
    runId: string,
    decisionFor: (request: RunApproval) => ApprovalDecisionInput,
  ): Promise<RunApproval[]> {
    const pending = await this.approvals.lockUndecided(manager, runId);
    const decided: RunApproval[] = [];
    const at = new Date();
    for (const request of pending) {
      const row = await this.decide(manager, runId, request.id, decisionFor(request), at);
      if (row) decided.push(row);
    }
    return decided;
  }

  /** Whether the run has a request nobody decided yet (read in `manager`'s transaction). */
  hasUndecided(manager: EntityManager, runId: string): Promise<boolean> {
    return this.approvals.hasUndecided(manager, runId);
  }
}
