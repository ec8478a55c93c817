import type { Schemas } from '../api/client';
import { sourceLabel } from '../labels';
import { Link } from '../router';

type Run = Schemas['RunItem'];

/** The model a run asked for; runs that named none ran on the team's default. */
export function runModel(run: Run): string {
  return run.agent_config?.model_id ?? 'default';
}

/** Where a run came from and why, as a console route when the console has a page for it. */
export function triggerOf(run: Run): { text: string; to?: string } {
  const source = sourceLabel(run.source);
  const metadata = run.metadata ?? {};
  if (run.source === 'SCHEDULED_AGENT' && run.schedule) {
    return {
      text: `${source}: ${run.schedule.schedule_name}`,
      to: `/schedules?schedule=${encodeURIComponent(run.schedule.schedule_id)}`,
    };
  }
  if (run.source === 'CUSTOM_WEBHOOK' && metadata.factory_uid && metadata.webhook_uid) {
    const query = new URLSearchParams({
      factory: metadata.factory_uid,
      webhook: metadata.webhook_uid,
      ...(metadata.delivery_id ? { delivery: metadata.delivery_id } : {}),
    });
    const automation = metadata.automation ? ` (${metadata.automation})` : '';
    return { text: `${source}${automation}`, to: `/webhooks?${query}` };
  }
  if (run.parent_run_id) {
    return { text: `${source}: parent run`, to: `/runs/${encodeURIComponent(run.parent_run_id)}` };
  }
  return { text: source };
}

export function TriggerLink({ run }: { run: Run }) {
  const trigger = triggerOf(run);
  return trigger.to ? <Link to={trigger.to}>{trigger.text}</Link> : <span>{trigger.text}</span>;
}
