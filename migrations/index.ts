import { Foundation1763780000000 } from './1763780000000-foundation';
import { SchedulesIdentities1763790000000 } from './1763790000000-schedules-identities';
import { SelfHostedWorkers1763800000000 } from './1763800000000-self-hosted-workers';
import { WebhooksFactories1763810000000 } from './1763810000000-webhooks-factories';
import { EnvironmentsSkills1763820000000 } from './1763820000000-environments-skills';
import { ConversationsArtifactsScores1763830000000 } from './1763830000000-conversations-artifacts-scores';
import { WorkspaceVolumes1763860000000 } from './1763860000000-workspace-volumes';
import { FactoryRepositoryCredentials1763870000000 } from './1763870000000-factory-repository-credentials';
import { RunAgentSkill1763880000000 } from './1763880000000-run-agent-skill';
import { FollowupsDropped1763895000000 } from './1763895000000-followups-dropped';
import { IdempotencyKeys1763900000000 } from './1763900000000-idempotency-keys';
import { WebhookDeliveryContentKey1763906190000 } from './1763906190000-webhook-delivery-content-key';
import { McpSecretValues1763910000000, SecretKeys } from './1763910000000-mcp-secret-values';
import { ApiKeyRoles1763925000000 } from './1763925000000-api-key-roles';
import { AuditEvents1763930000000 } from './1763930000000-audit-events';
import { RunLimits1764100000000 } from './1764100000000-run-limits';
import { SignInSessions1764200000000 } from './1764200000000-sign-in-sessions';
import { WebhookRedeliveries1764400000000 } from './1764400000000-webhook-redeliveries';
import { TeamNetworkPolicies1765100000000 } from './1765100000000-team-network-policies';
import { EnvironmentGrantConsent1765300000000 } from './1765300000000-environment-grant-consent';
import { WorkerCredentials1765400000000 } from './1765400000000-worker-credentials';
import { SecretScopes1765400000001 } from './1765400000001-secret-scopes';
import { IdempotencyPerCredential1765500000000 } from './1765500000000-idempotency-per-credential';
import { ScimTokens1765500000001 } from './1765500000001-scim-tokens';
import { AuditActorOnBehalfOf1765600000000 } from './1765600000000-audit-actor-on-behalf-of';
import { NotificationEndpoints1765700000000 } from './1765700000000-notification-endpoints';
import { DeliveryRunErrorCode1765900000000 } from './1765900000000-delivery-run-error-code';
import { RunApprovals1766100000000 } from './1766100000000-run-approvals';
import { RunExecutionTime1766200000000 } from './1766200000000-run-execution-time';
import { RunKeysWorkerCredential1766300000000 } from './1766300000000-run-keys-worker-credential';
import { RunContentRetention1766400000000 } from './1766400000000-run-content-retention';
import { RunsUnusedIndexes1766500000000 } from './1766500000000-runs-unused-indexes';
import { SweepPositions1766600000000 } from './1766600000000-sweep-positions';
import { WebhookDeliveryKeys1766700000000 } from './1766700000000-webhook-delivery-keys';

/** Every migration, oldest first. Forward-only: add a new file, never edit an applied one. */
export const MIGRATIONS = [
  Foundation1763780000000,
  SchedulesIdentities1763790000000,
  SelfHostedWorkers1763800000000,
  WebhooksFactories1763810000000,
  EnvironmentsSkills1763820000000,
  ConversationsArtifactsScores1763830000000,
  WorkspaceVolumes1763860000000,
  FactoryRepositoryCredentials1763870000000,
  RunAgentSkill1763880000000,
  FollowupsDropped1763895000000,
  IdempotencyKeys1763900000000,
  WebhookDeliveryContentKey1763906190000,
  McpSecretValues1763910000000,
  ApiKeyRoles1763925000000,
  AuditEvents1763930000000,
  RunLimits1764100000000,
  SignInSessions1764200000000,
  WebhookRedeliveries1764400000000,
  TeamNetworkPolicies1765100000000,
  EnvironmentGrantConsent1765300000000,
  WorkerCredentials1765400000000,
  SecretScopes1765400000001,
  IdempotencyPerCredential1765500000000,
  ScimTokens1765500000001,
  AuditActorOnBehalfOf1765600000000,
  NotificationEndpoints1765700000000,
  DeliveryRunErrorCode1765900000000,
  RunApprovals1766100000000,
  RunExecutionTime1766200000000,
  RunKeysWorkerCredential1766300000000,
  RunContentRetention1766400000000,
  RunsUnusedIndexes1766500000000,
  SweepPositions1766600000000,
  WebhookDeliveryKeys1766700000000,
];

/** MIGRATIONS, with the server's secrets keys given to the migrations that encrypt. */
export function migrationsWithKeys(keys: SecretKeys): typeof MIGRATIONS {
  return MIGRATIONS.map((migration) =>
    migration === McpSecretValues1763910000000
      ? McpSecretValues1763910000000.withKeys(keys)
      : migration,
  );
}
