import { API_PREFIX } from '../../bootstrap/http';

/**
 * The page that shows a run (its session): RunItem `session_link` and where the session and
 * conversation redirect endpoints send a browser. Ambient has no web console yet, so this is the
 * run's API URL; a console retargets it here, in one place.
 */
export function runPageUrl(publicUrl: string, runId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/${API_PREFIX}/agent/runs/${encodeURIComponent(runId)}`;
}

/**
 * Ambient's session of a run: the run's sandbox across its executions, whose uuid is the run id
 * (Ambient has no separately shared sessions). Available once an execution has started.
 */
export function sessionIdOf(run: { id: string; executionCount: number }): string | undefined {
  return run.executionCount > 0 ? run.id : undefined;
}
