/** What other modules may use of limits/: they import it from here only (ESLint rule ambient/import-through-index). */
export { MAX_USD } from './limits.dto';
export { LimitsModule } from './limits.module';
export { LimitsService } from './limits.service';
export type { RunLimitRows } from './limits.service';
export { TEAM_SCOPE } from './run-limits.entity';
export type { RunLimits } from './run-limits.entity';
