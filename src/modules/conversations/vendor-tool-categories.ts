import type { ActionCategory } from './conversation.types';

/*
 * The Oz conversation category of each tool a vendor CLI reports, by the name its stream mapper
 * records. Shell → command; reading or changing files → files; finding files or text, listing
 * directories and looking things up on the web (search and fetch) → search; planning notes (todo
 * lists, a presented plan, saved memories) → documents, as Oz keeps plans as documents; skills →
 * skill. Anything else — MCP tools (Claude `mcp__<server>__<tool>`, Codex `<server>.<tool>`, Gemini
 * by the server's own tool name), MCP resources, subagents — is an integration.
 */

/** Claude Code's built-in tools (`tool_use.name`). */
export const CLAUDE_TOOL_CATEGORIES: Readonly<Record<string, ActionCategory>> = {
  Bash: 'command',
  BashOutput: 'command',
  KillShell: 'command',
  KillBash: 'command',
  Read: 'files',
  Write: 'files',
  Edit: 'files',
  MultiEdit: 'files',
  NotebookRead: 'files',
  NotebookEdit: 'files',
  Glob: 'search',
  Grep: 'search',
  LS: 'search',
  WebSearch: 'search',
  WebFetch: 'search',
  TodoWrite: 'documents',
  ExitPlanMode: 'documents',
  Skill: 'skill',
};

/** The names `CodexStreamMapper` gives Codex's items. */
export const CODEX_TOOL_CATEGORIES: Readonly<Record<string, ActionCategory>> = {
  shell: 'command', // command_execution
  apply_patch: 'files', // file_change
  web_search: 'search',
};

/** Gemini CLI's built-in tools (`tool_use.tool_name`). */
export const GEMINI_TOOL_CATEGORIES: Readonly<Record<string, ActionCategory>> = {
  run_shell_command: 'command',
  read_file: 'files',
  read_many_files: 'files',
  write_file: 'files',
  replace: 'files',
  edit: 'files',
  glob: 'search',
  search_file_content: 'search',
  grep: 'search',
  list_directory: 'search',
  google_web_search: 'search',
  web_fetch: 'search',
  write_todos: 'documents',
  save_memory: 'documents',
};
