import { ApiError } from '../../common/errors/api-error';
import { ApprovalRule, ApprovalRuleError, parseApprovalRules } from './approval-rules';

/**
 * Approval rules from a request or a stored definition, normalised as they are kept (paths
 * normalised); an empty list is no rules (undefined). A bad rule is a 400 naming its field
 * (`config.approvals.1.command: …`), for inputs no DTO checked (a factory's or a schedule's config).
 */
export function checkedApprovals(input: unknown, field: string): ApprovalRule[] | undefined {
  if (input === undefined || input === null) return undefined;
  try {
    const rules = parseApprovalRules(input, field);
    return rules.length ? rules : undefined;
  } catch (err) {
    if (err instanceof ApprovalRuleError) throw new ApiError('invalid_request', err.message);
    throw err;
  }
}
