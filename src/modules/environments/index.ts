/** What other modules may use of environments/: they import it from here only (ESLint rule ambient/import-through-index). */
export { EnvironmentConfigDto, SandboxResourcesDto } from './dto/environment.dto';
export { cloneUrl, isSafeRepoPart, NETWORK_POLICIES } from './environment-config';
export type { EnvironmentConfig, NetworkPolicy } from './environment-config';
export { Environment } from './environment.entity';
export { toEnvironmentConfig } from './environment.mapper';
export { EnvironmentsModule } from './environments.module';
export { EnvironmentsService } from './environments.service';
