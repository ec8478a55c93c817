/** What other modules may use of identities/: they import it from here only (ESLint rule ambient/import-through-index). */
export { AgentAvailability } from './agent-availability.service';
export { AgentIdentity } from './agent-identity.entity';
export { AgentIdentityRepository } from './agent-identity.repository';
export { IdentitiesModule } from './identities.module';
export { IdentitiesService } from './identities.service';
export { IdentityRunResolver } from './identity-run-resolver.service';
export { AGENT_IDENTITY_TOPIC, IdentityApprovals } from './identity-approvals.service';
export { namesApprover } from './agent-approvers';
