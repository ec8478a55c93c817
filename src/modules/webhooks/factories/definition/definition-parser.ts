import { Diagnostic, FileDiagnostics, START } from './diagnostics';
import { parseAgentFile } from './agent-file';
import { parseAutomationFile } from './automation-file';
import {
  AgentSpec,
  AutomationSpec,
  DefinitionFile,
  FactorySettings,
  CheckableDefinition,
  ParsedDefinition,
  WebhookSpec,
} from './definition.types';
import { parseFactoryFile } from './factory-file';
import { parseWebhookFile } from './webhook-file';
import type { DefinitionVocabulary } from './definition-vocabulary';

export const MAX_WEBHOOKS_PER_FACTORY = 20;
export const MAX_FILE_BYTES = 2 * 1024 * 1024;
export const MAX_FILES = 500;

/** Files of the Warp layout that Ambient stores but does not act on. */
const KNOWN_UNUSED = [
  /^runners\/[^/]+\.yaml$/,
  /^skills\/.+/,
  /^agents\/[^/]+\/skills\/.+/,
  /^benchmarks\/.+/,
  /^scorers\/.+/,
];

export interface ParseOptions {
  /** Refuse files outside the layout (managed factories); a repository may hold anything else. */
  strictPaths: boolean;
  /** Harness types and signature schemes this application registers. */
  vocabulary: DefinitionVocabulary;
}

export interface ParseResult {
  definition: ParsedDefinition | null;
  diagnostics: Diagnostic[];
  /** What the files without a problem of their own hold, for the state checks. */
  checkable: CheckableDefinition;
}

/**
 * Parses and checks a whole definition without looking at any stored state. Every problem is
 * reported with its file, line and column; the definition is returned only when there is none.
 */
export function parseDefinition(files: DefinitionFile[], options: ParseOptions): ParseResult {
  const diagnostics: Diagnostic[] = [];
  const seen = new Set<string>();
  let factory: FactorySettings | null = null;
  let factoryFileSeen = false;
  const webhooks: WebhookSpec[] = [];
  const automations: AutomationSpec[] = [];
  const agents: AgentSpec[] = [];
  const kept: DefinitionFile[] = [];
  const checkable: CheckableDefinition = {
    factory: null,
    webhooks: [],
    automations: [],
    agents: [],
    webhookFiles: [],
  };
  if (files.length > MAX_FILES) {
    diagnostics.push({
      code: 'limit_exceeded',
      path: '',
      line: 1,
      column: 1,
      message: `a definition holds at most ${MAX_FILES} files (got ${files.length})`,
    });
  }

  for (const file of files) {
    const fd = new FileDiagnostics(file.path, diagnostics);
    if (!isSafePath(file.path)) {
      fd.add(
        'invalid_path',
        START,
        'paths are relative, use "/" and contain no "." or ".." segments',
      );
      continue;
    }
    if (seen.has(file.path)) {
      fd.add('duplicate_file', START, 'the same path is given twice');
      continue;
    }
    seen.add(file.path);
    if (Buffer.byteLength(file.content, 'utf8') > MAX_FILE_BYTES) {
      fd.add('limit_exceeded', START, `a file holds at most ${MAX_FILE_BYTES} bytes`);
      continue;
    }
    const route = routeOf(file.path);
    if (route.kind === 'ignored') {
      if (options.strictPaths)
        fd.add(
          'unknown_file',
          START,
          `not part of the factory layout (factory.yaml, agents/<name>/agent.md, automations/<name>/automation.md, webhooks/<name>.yaml …)`,
        );
      continue;
    }
    kept.push(file);
    if (route.kind === 'unused') continue;
    const problemsBefore = diagnostics.length;
    const clean = () => diagnostics.length === problemsBefore;
    if (route.kind === 'misplaced') {
      fd.add('invalid_path', START, route.hint);
    } else if (route.kind === 'factory') {
      factoryFileSeen = true;
      factory = parseFactoryFile(file.content, fd, options.vocabulary);
      if (clean()) checkable.factory = factory;
    } else if (route.kind === 'webhook') {
      checkable.webhookFiles.push({ name: route.name, path: file.path });
      const spec = parseWebhookFile(route.name, file.path, file.content, fd, options.vocabulary);
      if (spec) webhooks.push(spec);
      if (spec && webhooks.length > MAX_WEBHOOKS_PER_FACTORY) {
        fd.add(
          'limit_exceeded',
          START,
          `a factory has at most ${MAX_WEBHOOKS_PER_FACTORY} webhooks`,
        );
      }
      if (spec && clean()) checkable.webhooks.push(spec);
    } else if (route.kind === 'automation') {
      const spec = parseAutomationFile(route.name, file.path, file.content, fd, options.vocabulary);
      if (spec) automations.push(spec);
      if (spec && clean()) checkable.automations.push(spec);
    } else {
      const spec = parseAgentFile(route.name, file.path, file.content, fd, options.vocabulary);
      if (spec) agents.push(spec);
      if (spec && clean()) checkable.agents.push(spec);
    }
  }

  if (!factoryFileSeen) {
    diagnostics.push({
      code: 'missing_file',
      path: 'factory.yaml',
      line: 1,
      column: 1,
      message: 'factory.yaml is required',
    });
  }
  checkAgents(agents, automations, diagnostics);
  const definition =
    diagnostics.length === 0 && factory
      ? {
          factory,
          webhooks,
          automations,
          agents,
          files: kept.sort((a, b) => a.path.localeCompare(b.path)),
        }
      : null;
  return { definition, diagnostics, checkable };
}

function checkAgents(
  agents: AgentSpec[],
  automations: AutomationSpec[],
  diagnostics: Diagnostic[],
) {
  const foremen = agents.filter((a) => a.agentType === 'FOREMAN' || a.agentType === 'MAIN');
  for (const extra of foremen.slice(1)) {
    diagnostics.push({
      code: 'invalid_value',
      path: extra.path,
      line: 1,
      column: 1,
      message: `a factory has exactly one foreman; ${foremen[0].path} is already one`,
    });
  }
  const names = new Set(agents.map((a) => a.name));
  for (const automation of automations) {
    if (automation.agent && !names.has(automation.agent)) {
      diagnostics.push({
        code: 'unknown_agent',
        path: automation.path,
        ...automation.positions.agent,
        message: `agent "${automation.agent}" is not defined (agents/${automation.agent}/agent.md)`,
      });
    }
  }
}

type Route =
  | { kind: 'factory' }
  | { kind: 'webhook'; name: string }
  | { kind: 'automation'; name: string }
  | { kind: 'agent'; name: string }
  | { kind: 'unused' }
  | { kind: 'ignored' }
  | { kind: 'misplaced'; hint: string };

function routeOf(path: string): Route {
  if (path === 'factory.yaml') return { kind: 'factory' };
  let m = /^webhooks\/([^/]+)\.yaml$/.exec(path);
  if (m) return { kind: 'webhook', name: m[1] };
  m = /^automations\/([^/]+)\/automation\.md$/.exec(path);
  if (m) return { kind: 'automation', name: m[1] };
  m = /^agents\/([^/]+)\/agent\.md$/.exec(path);
  if (m) return { kind: 'agent', name: m[1] };
  if (KNOWN_UNUSED.some((re) => re.test(path))) return { kind: 'unused' };
  if (path.startsWith('webhooks/'))
    return { kind: 'misplaced', hint: 'a webhook file is webhooks/<name>.yaml' };
  if (path.startsWith('automations/'))
    return { kind: 'misplaced', hint: 'an automation file is automations/<name>/automation.md' };
  if (path === 'factory.yml')
    return { kind: 'misplaced', hint: 'the factory file is factory.yaml' };
  return { kind: 'ignored' };
}

function isSafePath(path: string): boolean {
  return (
    path.length > 0 &&
    path.length <= 512 &&
    !path.startsWith('/') &&
    !path.includes('\\') &&
    !path.includes('\0') &&
    path.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..')
  );
}
