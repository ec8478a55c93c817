import type { components } from '../api/schema';
import { sourceLabel } from '../labels';
import { formatUsd } from './money';

// From the generated schema, not client.ts: the unit specs run without a DOM.
type AuditEvent = components['schemas']['AuditEvent'];

/** A readable text, and the console route that shows the thing when the console has a page for it. */
export interface Linked {
  text: string;
  to?: string;
  /** The id, shown small beside a name. */
  id?: string;
}

const NOUNS: Record<string, string> = {
  run: 'Run',
  score: 'Score',
  schedule: 'Schedule',
  environment: 'Environment',
  secret: 'Secret',
  factory: 'Factory',
  webhook: 'Webhook',
  agent: 'Identity',
  api_key: 'API key',
  team: 'Team',
  limits: 'Limits',
  notification_endpoint: 'Notification endpoint',
  user: 'User',
  worker_credential: 'Worker credential',
  scim_token: 'SCIM token',
  network_policy: 'Network policy',
};

const VERBS: Record<string, string> = {
  create: 'created',
  update: 'changed',
  delete: 'deleted',
  pause: 'paused',
  resume: 'resumed',
  cancel: 'cancelled',
  revoke: 'revoked',
  rotate_secret: 'secret rotated',
  report: 'reported',
};

/** Actions whose words are not "<noun> <verb>". */
const ACTIONS: Record<string, string> = {
  'run.create': 'Run created',
  'run.followup': 'Follow-up sent',
  'environment.grant': 'Environment shared with a team',
  'environment.revoke': 'Environment share withdrawn',
  'environment.share_link': 'Share link created',
  'environment.accept_share_link': 'Share link accepted',
  'environment.accept': 'Shared environment accepted',
  'environment.decline': 'Shared environment declined',
  'environment.egress_allow': 'Host allowed',
  'factory.definition_put': 'Factory definition replaced',
  'factory.apply': 'Factory synced from its repository',
  'webhook.update': 'Webhook turned on or off',
  'webhook.redeliver': 'Delivery sent again',
  'notification_endpoint.resend': 'Notification sent again',
  'user.sign_in': 'Signed in',
  'user.sign_out': 'Signed out',
  'user.deactivate': 'User deactivated',
  'user.reactivate': 'User reactivated',
  'user.access_revoked': 'User access revoked',
};

/** A permission refused (`secrets.write`): the audit log names the permission as the action. */
const PERMISSION_VERBS: Record<string, string> = {
  read: 'read',
  write: 'change',
  create: 'start',
  cancel: 'cancel',
  followup: 'send follow-ups to',
  report: 'report on',
  accept: 'accept',
};

function words(code: string): string {
  return code.replace(/_/g, ' ');
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * `run.create` → "Run created", `schedule.pause` → "Schedule paused", a refused permission
 * (`secrets.write`) → "Change secrets"; an action this console does not know, in words.
 */
export function auditActionLabel(action: string): string {
  if (ACTIONS[action]) return ACTIONS[action];
  const [resource = '', verb = ''] = action.split('.', 2);
  if (NOUNS[resource] && VERBS[verb]) return `${NOUNS[resource]} ${VERBS[verb]}`;
  // Permissions are plural resources: `runs.create`, `api_keys.read`.
  if (PERMISSION_VERBS[verb] && resource.endsWith('s')) {
    const noun = resource === 'api_keys' ? 'API keys' : words(resource);
    return capitalised(`${PERMISSION_VERBS[verb]} ${noun}`);
  }
  return capitalised(verb ? `${words(resource)}: ${words(verb)}` : words(action));
}

export function auditOutcomeLabel(outcome: AuditEvent['outcome']): string {
  return { success: 'Succeeded', denied: 'Refused', failed: 'Failed' }[outcome] ?? outcome;
}

const enc = encodeURIComponent;

/** The console page of a thing of `type` with `id`, when it has one. */
function routeOf(type: string, id: string, details: Record<string, unknown>): string | undefined {
  const factory = typeof details.factory_id === 'string' ? details.factory_id : undefined;
  switch (type) {
    case 'run':
      return `/runs/${enc(id)}`;
    case 'schedule':
      return `/schedules?schedule=${enc(id)}`;
    case 'environment':
      return `/environments?environment=${enc(id)}`;
    case 'agent':
      return `/identities?identity=${enc(id)}`;
    case 'factory':
      return `/webhooks?factory=${enc(id)}`;
    case 'webhook':
      return factory ? `/webhooks?factory=${enc(factory)}&webhook=${enc(id)}` : '/webhooks';
    case 'api_key':
      // An identity's key is listed on its identity; a person's on the API keys page.
      return typeof details.agent_uid === 'string'
        ? `/identities?identity=${enc(details.agent_uid)}`
        : `/api-keys?key=${enc(id)}`;
    case 'notification_endpoint':
      return '/notifications';
    default:
      return undefined;
  }
}

/** What an event is about, linked to its page unless the event deleted it. */
export function auditTarget(event: AuditEvent): Linked | null {
  const target = event.target;
  if (!target) return null;
  const noun = NOUNS[target.type] ?? capitalised(words(target.type));
  const name = [event.details.name, event.details.title].find((v) => typeof v === 'string');
  const text = name ? `${noun} “${String(name)}”` : `${noun} ${target.id ?? ''}`.trim();
  const id = name && target.id ? target.id : undefined;
  // A thing the event deleted has no page any more.
  if (!target.id || (event.action.endsWith('.delete') && event.outcome === 'success')) {
    return { text, id };
  }
  // The team's limits are on the Usage page.
  if (event.action === 'limits.update' && target.type === 'team') {
    return { text: "The team's limits", id: target.id, to: '/usage' };
  }
  if (target.type === 'team') return { text, id };
  return { text, id, to: routeOf(target.type, target.id, event.details) };
}

/** Who acted, linked when the console has a page for it (a run, a key, an identity, a schedule). */
export function auditActor(actor: AuditEvent['actor']): Linked {
  const text = actor.name ?? actor.id;
  if (actor.type === 'run') return { text, to: `/runs/${enc(actor.id)}` };
  // Events before 2026-12-07 name an agent identity's key by the agent.
  if (actor.type === 'agent') return { text, to: `/identities?identity=${enc(actor.id)}` };
  // An agent identity's keys are on its page, not among the team's API keys.
  if (actor.type === 'api_key' && actor.on_behalf_of?.type === 'agent') {
    return { text, to: `/identities?identity=${enc(actor.on_behalf_of.id)}` };
  }
  if (actor.type === 'api_key') return { text, to: `/api-keys?key=${enc(actor.id)}` };
  const schedule = /^schedule:(.+)$/.exec(actor.id);
  if (actor.type === 'system' && schedule) {
    return { text, to: `/schedules?schedule=${enc(schedule[1])}` };
  }
  return { text };
}

/** One line of an event's details: a readable key and value, the value linked when it is an id. */
export interface DetailLine {
  key: string;
  value: string;
  to?: string;
}

const KEY_WORDS: Record<string, string> = {
  parent_run_id: 'Parent run',
  environment_id: 'Environment',
  executor_id: 'Executes as',
  factory_id: 'Factory',
  agent_uid: 'Identity',
  team_id: 'Team',
  delivery_id: 'Delivery',
  value_changed: 'Value changed',
};

/** `max_run_cost_usd` → "Max run cost (USD)", `secret_name` → "Secret name". */
export function detailKeyLabel(key: string): string {
  if (KEY_WORDS[key]) return KEY_WORDS[key];
  const usd = key.endsWith('_usd');
  const base = capitalised(words(usd ? key.slice(0, -4) : key)).replace(
    /\b(id|uid|url|ip)\b/gi,
    (w) => w.toUpperCase(),
  );
  return usd ? `${base} (USD)` : base;
}

/** A value for people: yes/no, "none" for null, dollars for `*_usd`, lists joined. */
export function detailValue(key: string, value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') return key.endsWith('_usd') ? formatUsd(value) : String(value);
  if (typeof value === 'string') return key === 'source' ? sourceLabel(value) : value;
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) {
    return value.length ? value.map((v) => detailValue(key, v)).join(', ') : 'none';
  }
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${detailKeyLabel(k)}: ${detailValue(k, v)}`)
      .join('; ');
  }
  return JSON.stringify(value);
}

const DETAIL_ROUTES: Record<string, (id: string) => string> = {
  parent_run_id: (id) => `/runs/${enc(id)}`,
  run_id: (id) => `/runs/${enc(id)}`,
  environment_id: (id) => `/environments?environment=${enc(id)}`,
  agent_uid: (id) => `/identities?identity=${enc(id)}`,
  factory_id: (id) => `/webhooks?factory=${enc(id)}`,
  schedule_id: (id) => `/schedules?schedule=${enc(id)}`,
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The details of an event as lines to read. A change's `before` and `after` become one line per
 * field that changed ("Monthly budget (USD): none → $250.00"); ids the console shows are linked.
 */
export function detailLines(details: Record<string, unknown>): DetailLine[] {
  const { before, after, ...rest } = details;
  const lines: DetailLine[] = [];
  if (isRecord(before) && isRecord(after)) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (JSON.stringify(before[key]) === JSON.stringify(after[key])) continue;
      const value = `${detailValue(key, before[key])} → ${detailValue(key, after[key])}`;
      lines.push({ key: detailKeyLabel(key), value });
    }
    if (lines.length === 0) lines.push({ key: 'Changes', value: 'none' });
  } else {
    if (before !== undefined) rest.before = before;
    if (after !== undefined) rest.after = after;
  }
  for (const [key, value] of Object.entries(rest)) {
    const route = typeof value === 'string' ? DETAIL_ROUTES[key]?.(value) : undefined;
    lines.push({ key: detailKeyLabel(key), value: detailValue(key, value), to: route });
  }
  return lines;
}
