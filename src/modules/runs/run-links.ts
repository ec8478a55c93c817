import { API_PREFIX } from '../../config/api-prefix';

/**
 * The page that shows a run (its session): RunItem `session_link` and where the session and
 * conversation redirect endpoints send a browser: the run page of the web console.
 */
export function runPageUrl(publicUrl: string, runId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/console/runs/${encodeURIComponent(runId)}`;
}

/**
 * Ambient's session of a run: the run's sandbox across its executions, whose uuid is the run id
 * (Ambient has no separately shared sessions). Available once an execution has started.
 */
export function sessionIdOf(run: { id: string; executionCount: number }): string | undefined {
  return run.executionCount > 0 ? run.id : undefined;
}

/**
 * RunItem `trigger_url`, "URL to the run trigger (e.g. Slack thread, Linear issue, schedule)":
 * the schedule of a scheduled run, the custom webhook of a webhook run, the parent of a child run
 * (API URLs, like the API's other links; `runPageUrl` is the browser's page); undefined for runs
 * started directly (API, CLI …).
 */
export function triggerUrlOf(
  publicUrl: string,
  run: {
    source: string;
    scheduleId: string | null;
    parentRunId: string | null;
    metadata: Record<string, string> | null;
  },
): string | undefined {
  const base = `${publicUrl.replace(/\/+$/, '')}/${API_PREFIX}`;
  const part = encodeURIComponent;
  if (run.source === 'SCHEDULED_AGENT' && run.scheduleId) {
    return `${base}/agent/schedules/${part(run.scheduleId)}`;
  }
  const factory = run.metadata?.factory_uid;
  const webhook = run.metadata?.webhook_uid;
  if (run.source === 'CUSTOM_WEBHOOK' && factory && webhook) {
    return `${base}/factory/${part(factory)}/webhooks/${part(webhook)}`;
  }
  if (run.parentRunId) return `${base}/agent/runs/${part(run.parentRunId)}`;
  return undefined;
}
