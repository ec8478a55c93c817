/** What other modules may use of environments/: they import it from here only (ESLint rule ambient/import-through-index). */
export { EnvironmentConfigDto, SandboxResourcesDto } from './dto/environment.dto';
export { NETWORK_POLICIES, cloneUrl, isSafeRepoPart } from './environment-config';
export type { EnvironmentConfig, NetworkPolicy } from './environment-config';
export { EnvironmentLatestRuns } from './environment-latest-runs';
export type { EnvironmentLatestRun } from './environment-latest-runs';
export { Environment } from './environment.entity';
export { EnvironmentRepository } from './environment.repository';
export { EnvironmentAccess } from './environment-access';
export { toEnvironmentConfig } from './environment.mapper';
export { EnvironmentsModule } from './environments.module';
export { EnvironmentsService } from './environments.service';
export {
  NetworkPolicyService,
  OPEN_EGRESS_FORBIDDEN,
} from './network-policy/network-policy.service';
