import type { components } from './api/schema';

type Schemas = components['schemas'];

type TimelineEvent = Schemas['TimelineEvent'];
type RuleInput = string | Schemas['EgressRule'];

/** A host the run's sandbox was refused, from its `egress_denied` timeline events. */
export interface BlockedHost {
  host: string;
  port: number;
  method: string | null;
  reason: string;
  count: number;
}

/**
 * The run's refused hosts: one row per host, port, method and reason, the counts of the events
 * (one per execution and host, repeats already folded by the sandbox) added up.
 */
export function blockedHostsOf(events: readonly TimelineEvent[]): BlockedHost[] {
  const rows = new Map<string, BlockedHost>();
  for (const event of events) {
    if ((event.event_type as string) !== 'egress_denied' || !event.payload) continue;
    const { host, port, method, reason, count } = event.payload;
    if (typeof host !== 'string' || typeof port !== 'number') continue;
    const row: BlockedHost = {
      host,
      port,
      method: typeof method === 'string' ? method : null,
      reason: typeof reason === 'string' ? reason : '',
      count: typeof count === 'number' ? count : 1,
    };
    const key = JSON.stringify([row.host, row.port, row.method, row.reason]);
    const seen = rows.get(key);
    if (seen) seen.count += row.count;
    else rows.set(key, row);
  }
  return [...rows.values()];
}

/** The `egress_allow` rule that lets the sandbox reach `host:port` (443 and 80 need no port). */
export function ruleFor(host: string, port: number): string {
  const name = host.includes(':') ? `[${host}]` : host;
  return port === 443 || port === 80 ? name : `${name}:${port}`;
}

/** `egress_allow` as the form's lines: a string rule as is, an object as `host METHOD …`. */
export function rulesText(rules: readonly RuleInput[] | undefined): string {
  return (rules ?? [])
    .map((rule) =>
      typeof rule === 'string' ? rule : [rule.host, ...(rule.methods ?? [])].join(' '),
    )
    .join('\n');
}

/** The form's lines as rules, each with its line number (1-based) for the server's errors. */
export function rulesOf(text: string): { rules: RuleInput[]; lines: number[] } {
  const rules: RuleInput[] = [];
  const lines: number[] = [];
  text.split('\n').forEach((line, i) => {
    const [host, ...methods] = line.trim().split(/\s+/).filter(Boolean);
    if (!host) return;
    rules.push(methods.length ? { host, methods } : host);
    lines.push(i + 1);
  });
  return { rules, lines };
}

/**
 * A 400's `egress_allow.<i>…: why` as the line it is about (`lines` from rulesOf), or null when
 * the message is about something else.
 */
export function ruleErrorLine(
  message: string,
  lines: readonly number[],
): { line: number; problem: string } | null {
  const match = /egress_allow\.(\d+)(?:\.[\w.]+)?: (.*)$/s.exec(message);
  if (!match) return null;
  const line = lines[Number(match[1])];
  return line === undefined ? null : { line, problem: match[2] };
}
