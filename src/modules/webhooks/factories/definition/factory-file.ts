import type { DefinitionVocabulary } from './definition-vocabulary';
import { FileDiagnostics } from './diagnostics';
import { FactorySettings } from './definition.types';
import { EXECUTION_KEYS, readExecutionSettings } from './execution-settings';
import { MapReader } from './map-reader';
import { YamlSource } from './yaml-source';

export const SCHEMA_VERSION = 'v1alpha1';

const FACTORY_KEYS = [
  'schemaVersion',
  'name',
  'description',
  'alias',
  'credentialStrategy',
  'repositories',
  'secrets',
  'mcpServers',
  'cloudProviders',
  'integrations',
  'agentDefaults',
];

/** `factory.yaml`: the factory's settings. */
export function parseFactoryFile(
  content: string,
  diagnostics: FileDiagnostics,
  vocabulary: DefinitionVocabulary,
): FactorySettings | null {
  const source = new YamlSource(content, diagnostics);
  if (!source.ok) return null;
  const reader = MapReader.of(source, diagnostics, [], source.value, 'factory.yaml');
  if (!reader) return null;
  reader.allowOnly(FACTORY_KEYS, 'factory.yaml');
  const version = reader.string('schemaVersion', { required: true });
  if (version !== undefined && version !== SCHEMA_VERSION) {
    reader.error('schemaVersion', 'invalid_value', `"schemaVersion" must be ${SCHEMA_VERSION}`);
  }
  const name = reader.string('name', { required: true, max: 255 });
  const description = reader.string('description', { max: 4000 }) ?? null;
  reader.string('alias', {
    max: 60,
    pattern: /^[A-Za-z0-9 ._-]+$/,
    rule: 'may hold only letters, digits, spaces, ".", "_" and "-"',
  });
  reader.oneOf('credentialStrategy', ['EXECUTOR', 'CREATOR']);
  if (reader.has('repositories')) reader.list('repositories');
  reader.stringList('secrets');
  const defaults = reader.map('agentDefaults');
  if (defaults) defaults.allowOnly(EXECUTION_KEYS, 'agentDefaults');
  const agentDefaults = defaults ? readExecutionSettings(defaults, vocabulary.harnessTypes) : {};
  if (name === undefined) return null;
  return { name, description, agentDefaults, raw: reader.value };
}
