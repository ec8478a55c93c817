import { MapReader } from './map-reader';

/** Names a definition may use for a registered harness type. */
const HARNESS_ALIASES: Readonly<Record<string, string>> = { 'claude-code': 'claude' };

/** Where and how a run executes: factory `agentDefaults`, an agent, or an automation override. */
export interface ExecutionSettings {
  model?: string;
  harness?: { type: string; model?: string; reasoningLevel?: string };
  runner?: string;
  environmentId?: string;
  workerHost?: string;
  secrets?: string[];
  mcpServers?: Record<string, unknown>;
}

export const EXECUTION_KEYS = [
  'model',
  'harness',
  'runner',
  'environmentId',
  'secrets',
  'mcpServers',
  'workerHost',
] as const;

/** Reads the execution keys of a mapping (the caller has already limited which keys exist). */
export function readExecutionSettings(
  reader: MapReader,
  harnessTypes: readonly string[],
): ExecutionSettings {
  const settings: ExecutionSettings = {};
  if (reader.has('model') && reader.has('harness')) {
    reader.error('harness', 'invalid_value', 'give either "model" or "harness", not both');
  }
  const model = reader.string('model', { max: 128 });
  if (model) settings.model = model;
  const harness = reader.map('harness');
  if (harness) {
    harness.allowOnly(['type', 'model', 'reasoningLevel', 'auth'], 'harness');
    const aliases = Object.keys(HARNESS_ALIASES).filter((a) =>
      harnessTypes.includes(HARNESS_ALIASES[a]),
    );
    const type = harness.oneOf('type', [...harnessTypes, ...aliases]);
    if (!harness.has('type')) harness.error('type', 'required', '"type" is required');
    if (type) {
      settings.harness = { type: HARNESS_ALIASES[type] ?? type };
      const harnessModel = harness.string('model', { max: 128 });
      if (harnessModel) settings.harness.model = harnessModel;
      const level = harness.string('reasoningLevel', { max: 32 });
      if (level) {
        if (type === 'oz')
          harness.error(
            'reasoningLevel',
            'invalid_value',
            'the oz harness takes no reasoningLevel',
          );
        else settings.harness.reasoningLevel = level;
      }
      if (type === 'oz' && harness.has('auth')) {
        harness.error('auth', 'invalid_value', 'the oz harness takes no auth');
      }
    }
  }
  const runner = reader.string('runner', { max: 128 });
  if (runner) settings.runner = runner;
  const environmentId = reader.string('environmentId', { max: 64 });
  if (environmentId) settings.environmentId = environmentId;
  const workerHost = reader.string('workerHost', { max: 255 });
  if (workerHost) settings.workerHost = workerHost;
  const secrets = reader.stringList('secrets');
  if (secrets) settings.secrets = secrets;
  const mcp = reader.map('mcpServers');
  if (mcp) settings.mcpServers = mcp.value;
  return settings;
}

/** Later layers win key by key (factory defaults ← agent ← automation). */
export function mergeExecution(...layers: (ExecutionSettings | undefined)[]): ExecutionSettings {
  const merged: ExecutionSettings = {};
  for (const layer of layers) {
    if (!layer) continue;
    if (layer.model) {
      merged.model = layer.model;
      delete merged.harness;
    }
    if (layer.harness) {
      merged.harness = layer.harness;
      delete merged.model;
    }
    for (const key of ['runner', 'environmentId', 'workerHost', 'secrets', 'mcpServers'] as const) {
      if (layer[key] !== undefined) (merged as Record<string, unknown>)[key] = layer[key];
    }
  }
  return merged;
}
