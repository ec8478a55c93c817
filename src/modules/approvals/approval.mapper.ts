import type { JsonObject } from '../../common/json';
import { toRfc3339 } from '../../common/time';
import type { RunApproval } from '../runs';
import type { ApprovalDto } from './dto/approval.dto';

/** A request as the API shows it, without `can_decide` (the notifications' `data.approval`). */
export function approvalPayload(row: RunApproval): Omit<ApprovalDto, 'can_decide'> & JsonObject {
  return {
    id: row.id,
    run_id: row.runId,
    kind: row.kind,
    tool: row.tool,
    arguments: row.arguments as JsonObject,
    rule: row.rule ? { ...row.rule } : null,
    summary: row.summary,
    requested_at: toRfc3339(row.requestedAt)!,
    decision: row.decision,
    comment: row.comment,
    decided_by: row.decidedBy ? { ...row.decidedBy } : null,
    decided_at: toRfc3339(row.decidedAt),
  };
}

export function toApprovalDto(row: RunApproval, canDecide: boolean): ApprovalDto {
  return { ...approvalPayload(row), can_decide: canDecide };
}
