import type { DefinitionVocabulary } from './definition-vocabulary';
import { FileDiagnostics, START } from './diagnostics';
import { AGENT_TYPES, AgentSpec } from './definition.types';
import { EXECUTION_KEYS, readExecutionSettings } from './execution-settings';
import { MapReader } from './map-reader';
import { splitFrontMatter, YamlSource } from './yaml-source';

/** `agents/<name>/agent.md`: optional front matter, the agent's base prompt as the body. */
export function parseAgentFile(
  name: string,
  path: string,
  content: string,
  diagnostics: FileDiagnostics,
  vocabulary: DefinitionVocabulary,
): AgentSpec | null {
  const parts = splitFrontMatter(content) ?? { yaml: '', yamlFirstLine: 1, body: content.trim() };
  const source = new YamlSource(parts.yaml, diagnostics, parts.yamlFirstLine - 1);
  if (!source.ok) return null;
  const reader = MapReader.of(source, diagnostics, [], source.value ?? {}, 'the front matter');
  if (!reader) return null;
  reader.allowOnly(
    ['description', 'agentType', 'credentialStrategy', ...EXECUTION_KEYS],
    'agent front matter',
  );
  const agentType = reader.oneOf('agentType', AGENT_TYPES, 'CUSTOM');
  reader.oneOf('credentialStrategy', ['EXECUTOR', 'CREATOR']);
  const description = reader.string('description', { max: 4000 }) ?? null;
  const execution = readExecutionSettings(reader, vocabulary.harnessTypes);
  if (!agentType) return null;
  return {
    name,
    path,
    agentType,
    description,
    execution,
    prompt: parts.body,
    positions: { model: reader.has('model') ? reader.at('model') : START },
  };
}
