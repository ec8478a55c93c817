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
export { secretRef } from './secret-ref';
export { IsEgressRules, IsHostPatterns } from './egress-validators';
