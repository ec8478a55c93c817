/** What other modules may use of retention/: they import it from here only (ESLint rule ambient/import-through-index). */
export { RetentionModule } from './retention.module';
export { RunContentRetentionSweeper } from './run-content-retention.sweeper';
