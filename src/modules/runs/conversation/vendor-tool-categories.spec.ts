import { StoredMessage, toConversationSteps } from './conversation.mapper';
import type { ContentBlock } from './conversation.types';
import type { ChatMessage } from '../../workers';
import {
  ClaudeStreamMapper,
  CodexStreamMapper,
  GeminiStreamMapper,
  StreamEvent,
  VendorStreamMapper,
} from '../../workers';

/** Feeds the events through the vendor's mapper and the conversation mapper, as a run would. */
function blocks(harness: string, mapper: VendorStreamMapper, events: StreamEvent[]) {
  const messages: ChatMessage[] = [...events.flatMap((e) => mapper.map(e)), ...mapper.flush()];
  const rows: StoredMessage[] = messages.map((message, i) => ({
    id: String(i + 1),
    runId: 'r',
    executionId: 1,
    message: message as unknown as StoredMessage['message'],
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
  }));
  const [step] = toConversationSteps(rows, [{ runId: 'r', executionId: 1, title: 't', harness }]);
  const all = step.messages.flatMap((m) => m.content);
  const pick = <T extends ContentBlock['type']>(type: T) =>
    all.filter((b): b is Extract<ContentBlock, { type: T }> => b.type === type);
  return { actions: pick('action'), results: pick('action_result') };
}

describe('vendor CLI tool calls in the conversation have Oz categories', () => {
  describe('claude', () => {
    it.each([
      ['Bash', 'command'],
      ['BashOutput', 'command'],
      ['Read', 'files'],
      ['Write', 'files'],
      ['Edit', 'files'],
      ['MultiEdit', 'files'],
      ['NotebookEdit', 'files'],
      ['Glob', 'search'],
      ['Grep', 'search'],
      ['LS', 'search'],
      ['WebSearch', 'search'],
      ['WebFetch', 'search'],
      ['TodoWrite', 'documents'],
      ['ExitPlanMode', 'documents'],
      ['Skill', 'skill'],
      ['mcp__github__create_issue', 'integration'],
      ['ReadMcpResourceTool', 'integration'],
      ['Task', 'integration'],
    ])('%s → %s', (name, category) => {
      const { actions, results } = blocks('claude', new ClaudeStreamMapper(), [
        {
          type: 'assistant',
          message: { content: [{ type: 'tool_use', id: 'u1', name, input: {} }] },
        },
        {
          type: 'user',
          message: { content: [{ type: 'tool_result', tool_use_id: 'u1', content: 'ok' }] },
        },
      ]);
      expect(actions).toEqual([expect.objectContaining({ name, category })]);
      expect(results).toEqual([expect.objectContaining({ name, category })]);
    });
  });

  describe('codex', () => {
    it.each([
      [
        'command_execution',
        { command: 'ls', aggregated_output: 'a', exit_code: 0 },
        'shell',
        'command',
      ],
      [
        'file_change',
        { changes: [{ path: 'a', kind: 'add' }], status: 'completed' },
        'apply_patch',
        'files',
      ],
      ['web_search', { query: 'nest' }, 'web_search', 'search'],
      [
        'mcp_tool_call',
        { server: 'github', tool: 'search', arguments: {} },
        'github.search',
        'integration',
      ],
    ])('%s → %s (%s)', (type, fields, name, category) => {
      const { actions, results } = blocks('codex', new CodexStreamMapper(), [
        { type: 'item.completed', item: { id: 'i1', type, ...fields } },
      ]);
      expect(actions).toEqual([expect.objectContaining({ name, category })]);
      expect(results).toEqual([expect.objectContaining({ name, category })]);
    });
  });

  describe('gemini', () => {
    it.each([
      ['run_shell_command', 'command'],
      ['read_file', 'files'],
      ['read_many_files', 'files'],
      ['write_file', 'files'],
      ['replace', 'files'],
      ['glob', 'search'],
      ['search_file_content', 'search'],
      ['list_directory', 'search'],
      ['google_web_search', 'search'],
      ['web_fetch', 'search'],
      ['write_todos', 'documents'],
      ['save_memory', 'documents'],
      ['create_issue', 'integration'], // an MCP server's tool
    ])('%s → %s', (name, category) => {
      const { actions, results } = blocks('gemini', new GeminiStreamMapper(), [
        { type: 'tool_use', tool_name: name, tool_id: 't1', parameters: {} },
        { type: 'tool_result', tool_id: 't1', status: 'success', output: 'ok' },
      ]);
      expect(actions).toEqual([expect.objectContaining({ name, category })]);
      expect(results).toEqual([expect.objectContaining({ name, category })]);
    });
  });

  it('reads a name by the harness that recorded it', () => {
    const events = [{ type: 'tool_use', tool_name: 'glob', tool_id: 't1', parameters: {} }];
    expect(blocks('gemini', new GeminiStreamMapper(), events).actions[0].category).toBe('search');
    // The same name from the oz harness would be an MCP tool it does not know.
    expect(blocks('oz', new GeminiStreamMapper(), events).actions[0].category).toBe('integration');
    expect(blocks('claude', new GeminiStreamMapper(), events).actions[0].category).toBe(
      'integration',
    );
  });
});
