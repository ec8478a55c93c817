import type { ValidationOptions } from 'class-validator';
import { ApprovalRuleError, parseApprovalRules } from './approval-rules';
import { parsedBy } from './parsed-by';

/** `approvals`: a list of rules `parseApprovalRules` accepts (the message names the rule's field). */
export function IsApprovalRules(options?: ValidationOptions): PropertyDecorator {
  return parsedBy('approvalRules', parseApprovalRules, ApprovalRuleError, options);
}
