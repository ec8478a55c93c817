import type { ActionCategory } from './conversation.types';
import {
  CLAUDE_TOOL_CATEGORIES,
  CODEX_TOOL_CATEGORIES,
  GEMINI_TOOL_CATEGORIES,
} from './vendor-tool-categories';

/** The built-in `oz` harness's tools; its MCP tools (`mcp__…`) are integrations. */
export const OZ_TOOL_CATEGORIES: Readonly<Record<string, ActionCategory>> = {
  run_command: 'command',
  read_file: 'files',
  write_file: 'files',
  edit_file: 'files',
  list_files: 'search',
  search_files: 'search',
  report_artifact: 'documents',
  finish: 'review',
};

const BY_HARNESS: Readonly<Record<string, Readonly<Record<string, ActionCategory>>>> = {
  oz: OZ_TOOL_CATEGORIES,
  claude: CLAUDE_TOOL_CATEGORIES,
  codex: CODEX_TOOL_CATEGORIES,
  gemini: GEMINI_TOOL_CATEGORIES,
};

/**
 * The Oz category of a tool call recorded by a run of `harness`; a tool the harness's table does
 * not know (MCP servers, anything new) is an integration.
 */
export function toolCategory(toolName: string, harness = 'oz'): ActionCategory {
  const table = BY_HARNESS[harness] ?? OZ_TOOL_CATEGORIES;
  return Object.hasOwn(table, toolName) ? table[toolName] : 'integration';
}
