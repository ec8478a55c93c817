/** What other modules may use of metrics/: they import it from here only (ESLint rule ambient/import-through-index). */
export { AmbientMetrics } from './ambient-metrics';
