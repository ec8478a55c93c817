import type { DefinitionVocabulary } from './definition-vocabulary';
import { UID_PATTERN } from '../../../../common/ids';
import { PayloadFilter } from '../../filter/payload-filter';
import { validatePayloadFilter } from '../../filter/payload-filter-validation';
import { FileDiagnostics, START } from './diagnostics';
import { AutomationSpec, WebhookTriggerSpec } from './definition.types';
import { EXECUTION_KEYS, readExecutionSettings } from './execution-settings';
import { MapReader } from './map-reader';
import { splitFrontMatter, YamlSource } from './yaml-source';

export const AUTOMATION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const PROVIDERS = ['github', 'gitlab', 'linear', 'jira', 'slack', 'schedule', 'webhook', 'factory'];

/**
 * `automations/<name>/automation.md`: front matter (enabled, agent, triggers, execution
 * overrides) and the prompt as the body. Ambient fires webhook triggers only.
 */
export function parseAutomationFile(
  name: string,
  path: string,
  content: string,
  diagnostics: FileDiagnostics,
  vocabulary: DefinitionVocabulary,
): AutomationSpec | null {
  if (!AUTOMATION_NAME.test(name)) {
    diagnostics.add(
      'invalid_path',
      START,
      `automation name "${name}" must be 1-128 letters, digits, ".", "_" or "-"`,
    );
    return null;
  }
  const parts = splitFrontMatter(content);
  if (!parts) {
    diagnostics.add(
      'front_matter',
      START,
      'an automation starts with YAML front matter between two "---" lines',
    );
    return null;
  }
  const source = new YamlSource(parts.yaml, diagnostics, parts.yamlFirstLine - 1);
  if (!source.ok) return null;
  const reader = MapReader.of(source, diagnostics, [], source.value ?? {}, 'the front matter');
  if (!reader) return null;
  reader.allowOnly(['enabled', 'agent', 'triggers', ...EXECUTION_KEYS], 'automation front matter');
  const enabled = reader.bool('enabled', true);
  const agent = reader.string('agent', { max: 128 }) ?? null;
  const execution = readExecutionSettings(reader, vocabulary.harnessTypes);
  const triggerList = reader.list('triggers');
  if (!reader.has('triggers')) reader.error('triggers', 'required', '"triggers" is required');
  else if (triggerList?.length === 0)
    reader.error('triggers', 'required', '"triggers" must list at least one trigger');
  const triggers: WebhookTriggerSpec[] = [];
  let ok = true;
  for (const [i, raw] of (triggerList ?? []).entries()) {
    const trigger = readTrigger(source, diagnostics, i, raw);
    if (trigger) triggers.push(trigger);
    else ok = false;
  }
  if (!parts.body) {
    diagnostics.add(
      'required',
      { line: parts.yamlFirstLine + parts.yaml.split('\n').length, column: 1 },
      'the prompt (the text after the front matter) is empty',
    );
    ok = false;
  }
  if (!ok || !triggerList || triggerList.length === 0) return null;
  return {
    name,
    path,
    enabled,
    agent,
    triggers,
    execution,
    prompt: parts.body,
    positions: {
      agent: reader.at('agent'),
      model: reader.at(reader.has('model') ? 'model' : 'harness'),
    },
  };
}

function readTrigger(
  source: YamlSource,
  diagnostics: FileDiagnostics,
  index: number,
  raw: unknown,
): WebhookTriggerSpec | null {
  const trigger = MapReader.of(source, diagnostics, ['triggers', index], raw, `triggers[${index}]`);
  if (!trigger) return null;
  trigger.allowOnly(['provider', 'event', 'filter', 'schedule'], `triggers[${index}]`);
  const provider = trigger.oneOf('provider', PROVIDERS);
  if (!trigger.has('provider')) trigger.error('provider', 'required', '"provider" is required');
  if (provider && provider !== 'webhook') {
    trigger.error(
      'provider',
      'unsupported',
      `provider "${provider}" is not supported by Ambient; only "webhook" triggers fire`,
    );
    return null;
  }
  const event = trigger.string('event', { required: true });
  if (event !== undefined && event !== 'received') {
    trigger.error('event', 'invalid_value', 'the webhook provider has one event: received');
  }
  const filter = trigger.map('filter');
  if (!trigger.has('filter'))
    trigger.error('filter', 'required', '"filter.webhook_ids" is required for webhook triggers');
  if (!filter || !provider || event !== 'received') return null;
  filter.allowOnly(['webhook_ids', 'payload'], 'a webhook trigger filter');
  const ids = readWebhookIds(filter);
  let payload: PayloadFilter | null = null;
  if (filter.has('payload')) {
    const problems = validatePayloadFilter(filter.value.payload);
    for (const problem of problems) {
      diagnostics.add(
        'invalid_filter',
        source.at([...filter.path, 'payload', ...problem.path]),
        `filter.payload${problem.path.length ? `.${problem.path.join('.')}` : ''}: ${problem.message}`,
      );
    }
    if (problems.length) return null;
    payload = filter.value.payload as PayloadFilter;
  }
  if (!ids) return null;
  return {
    webhookIds: ids,
    payload,
    positions: {
      webhookIds: ids.map((_, i) =>
        source.at([
          ...filter.path,
          'webhook_ids',
          ...(Array.isArray(filter.value.webhook_ids) ? [] : ['in']),
          i,
        ]),
      ),
    },
  };
}

/** `webhook_ids: [uid, …]` or `{in: [uid, …]}`; UIDs only. */
function readWebhookIds(filter: MapReader): string[] | null {
  if (!filter.has('webhook_ids')) {
    filter.error(
      'webhook_ids',
      'required',
      '"webhook_ids" is required: list the UIDs of the webhooks that trigger this automation',
    );
    return null;
  }
  let reader = filter;
  let key = 'webhook_ids';
  const raw = filter.value.webhook_ids;
  if (!Array.isArray(raw)) {
    const inner = filter.map('webhook_ids');
    if (!inner) return null;
    inner.allowOnly(['in'], 'webhook_ids (only "in" is supported)');
    reader = inner;
    key = 'in';
  }
  const ids = reader.stringList(key);
  if (!ids) {
    if (reader.has(key)) return null;
    reader.error(key, 'required', '"webhook_ids" must list webhook UIDs');
    return null;
  }
  if (ids.length === 0) {
    reader.error(key, 'required', '"webhook_ids" must list at least one webhook UID');
    return null;
  }
  let ok = true;
  ids.forEach((id, i) => {
    if (!UID_PATTERN.test(id)) {
      ok = false;
      reader.diagnostics.add(
        'invalid_value',
        reader.source.at([...reader.path, key, i]),
        `webhook_ids[${i}]: "${id}" is not a webhook UID (webhook_ids takes UIDs, not file names; a webhook gets its 22-character UID when its file first applies)`,
      );
    }
  });
  return ok ? ids : null;
}
