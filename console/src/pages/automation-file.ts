import { parse, stringify } from 'yaml';

/** What the console edits of an automation: the rest of its front matter is kept as it is. */
export interface AutomationFields {
  name: string;
  enabled: boolean;
  model: string;
  webhookIds: string[];
  /** A payload filter as JSON text; empty for none. */
  payload: string;
  prompt: string;
}

export const automationPath = (name: string) => `automations/${name}/automation.md`;

/** An automation.md's front matter (a map) and its body (the prompt). */
export function splitAutomation(content: string): { front: Record<string, unknown>; body: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(content);
  if (!match) return { front: {}, body: content };
  const front = parse(match[1]) as unknown;
  return {
    front: front && typeof front === 'object' ? (front as Record<string, unknown>) : {},
    body: match[2],
  };
}

/**
 * The automation.md for `fields`, keeping whatever else an existing file's front matter says
 * (harness, environment, secrets …) and any triggers after the first, which the form does not show.
 */
export function automationFile(fields: AutomationFields, existing?: string): string {
  const { front } = existing ? splitAutomation(existing) : { front: {} as Record<string, unknown> };
  let payload: unknown;
  if (fields.payload.trim()) {
    try {
      payload = JSON.parse(fields.payload);
    } catch {
      throw new Error('The payload filter is not valid JSON.');
    }
  }
  const others = Array.isArray(front.triggers) ? front.triggers.slice(1) : [];
  const next: Record<string, unknown> = { ...front, enabled: fields.enabled };
  if (fields.model.trim()) next.model = fields.model.trim();
  else delete next.model;
  next.triggers = [
    {
      provider: 'webhook',
      event: 'received',
      filter: { webhook_ids: fields.webhookIds, ...(payload === undefined ? {} : { payload }) },
    },
    ...others,
  ];
  return `---\n${stringify(next)}---\n${fields.prompt.trim()}\n`;
}

/** The form's fields for an automation as the API lists it. */
export function fieldsOf(automation: {
  name: string;
  enabled: boolean;
  execution?: Record<string, unknown> | null;
  prompt?: string;
  triggers: Record<string, unknown>[];
}): AutomationFields {
  // The API lists a trigger with its filter's fields inline; a file nests them under `filter`.
  const trigger = automation.triggers[0] ?? {};
  const filter = (trigger.filter ?? trigger) as { webhook_ids?: string[]; payload?: unknown };
  const model = automation.execution?.model;
  return {
    name: automation.name,
    enabled: automation.enabled,
    model: typeof model === 'string' ? model : '',
    webhookIds: filter.webhook_ids ?? [],
    payload: filter.payload === undefined ? '' : JSON.stringify(filter.payload, null, 2),
    prompt: automation.prompt ?? '',
  };
}
