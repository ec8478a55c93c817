import type { JsonObject } from '../../common/json';
import type { NotificationEvent } from './notification-events';

/** The Standard Webhooks body of every delivery: `{type, timestamp, data}`. */
export interface NotificationEnvelope {
  type: NotificationEvent;
  timestamp: string;
  data: JsonObject;
}

/** What `data.run` holds in the run events (and in the approval events, for their run). */
export interface RunSummary {
  id: string;
  state: string;
  title: string;
  status_message: JsonObject | null;
  session_link: string;
  created_at: string;
  updated_at: string;
}

export function envelope(type: NotificationEvent, data: JsonObject, at = new Date()): string {
  return JSON.stringify({ type, timestamp: at.toISOString(), data } satisfies NotificationEnvelope);
}

const RUN_VERBS: Partial<Record<NotificationEvent, string>> = {
  'run.succeeded': 'succeeded',
  'run.failed': 'failed',
  'run.cancelled': 'was cancelled',
  'run.blocked': 'is blocked and waits for a person',
  'approval.requested': 'asks for an approval',
  'approval.decided': 'had its approval decided',
};

/**
 * The body a Slack incoming webhook accepts: one short line with a link to the run's console
 * page (Slack's `<url|label>` markup; `&`, `<`, `>` escaped as Slack asks).
 */
export function slackBody(stored: string): string {
  const { type, data } = JSON.parse(stored) as NotificationEnvelope;
  const run = data.run as Partial<RunSummary> | undefined;
  const verb = RUN_VERBS[type] ?? type;
  if (!run?.id) return JSON.stringify({ text: `Ambient: ${slackEscape(type)}` });
  const title = slackEscape(run.title || run.id);
  const status = statusText(run.status_message);
  const line = `Run “${title}” ${verb}${status ? `: ${slackEscape(status)}` : '.'}`;
  const link = run.session_link ? ` <${run.session_link}|Open in Ambient>` : '';
  return JSON.stringify({ text: `${line}${link}` });
}

function statusText(message: JsonObject | null | undefined): string | null {
  const text = message?.message;
  return typeof text === 'string' && text ? text.slice(0, 300) : null;
}

function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
