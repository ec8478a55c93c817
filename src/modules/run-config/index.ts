/** What other modules may use of run-config/: they import it from here only (ESLint rule ambient/import-through-index). */
export {
  AgentConfigDto,
  HarnessAuthSecretsDto,
  HarnessDto,
  McpServerConfigDto,
  MemoryStoreRefDto,
  SecretRefDto,
} from './agent-config.dto';
export type {
  AgentConfig,
  ExecutionConfig,
  McpSecretReference,
  McpSecretValue,
  McpServerConfig,
  RequestUsage,
  ResolvedAgentSkill,
  ScheduleInfo,
  SealedMcpValue,
  SecretRef,
  StatusMessage,
  StoredMcpServerConfig,
} from './run-config.types';
export { HarnessTypes } from './harness-types';
export { secretRef } from './secret-ref';
export { IsEgressRules, IsHostPatterns } from './egress-validators';
export { IsApprovalRules } from './approval-validators';
export { ApprovalRuleDto, approvalsProperty } from './approval-rule.dto';
export { parsedBy } from './parsed-by';
export { checkedApprovals } from './approval-input';
export {
  APPROVAL_EFFECTS,
  ApprovalRuleError,
  combineApprovalRules,
  describeApprovalRule,
  MAX_APPROVAL_RULES,
  parseApprovalRules,
} from './approval-rules';
export type { ApprovalEffect, ApprovalRule } from './approval-rules';
export { evaluateApproval } from './approval-policy';
export type { ApprovalSubject, ApprovalVerdict } from './approval-policy';
