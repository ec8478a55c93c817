import { ClaudeStreamMapper } from './claude-harness';
import { CodexStreamMapper } from './codex-harness';
import { GeminiStreamMapper } from './gemini-harness';
import { parseEventLine, StreamEvent, VendorStreamMapper } from './vendor-stream';

const feed = (mapper: VendorStreamMapper, events: StreamEvent[]) => [
  ...events.flatMap((e) => mapper.map(e)),
  ...mapper.flush(),
];

describe('parseEventLine', () => {
  it('accepts JSON objects only', () => {
    expect(parseEventLine('{"type":"x"}')).toEqual({ type: 'x' });
    expect(parseEventLine('  {"type":"x"}  ')).toEqual({ type: 'x' });
    expect(parseEventLine('Loading…')).toBeUndefined();
    expect(parseEventLine('{broken')).toBeUndefined();
    expect(parseEventLine('[1,2]')).toBeUndefined();
  });
});

describe('ClaudeStreamMapper', () => {
  it('maps assistant text + tool_use, tool results and the result', () => {
    const mapper = new ClaudeStreamMapper();
    const messages = feed(mapper, [
      { type: 'system', subtype: 'init', session_id: 's' },
      {
        type: 'assistant',
        message: {
          content: [
            { type: 'thinking', thinking: 'hmm' },
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } },
          ],
          usage: { input_tokens: 10, output_tokens: 2 },
        },
      },
      {
        type: 'user',
        message: {
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [{ type: 'text', text: 'a.txt' }],
            },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'denied', is_error: true },
          ],
        },
      },
      {
        type: 'result',
        subtype: 'success',
        result: 'Found a.txt',
        num_turns: 2,
        usage: { input_tokens: 20, cache_read_input_tokens: 5, output_tokens: 7 },
      },
    ]);
    expect(messages).toEqual([
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          {
            id: 'toolu_1',
            type: 'function',
            function: { name: 'Bash', arguments: '{"command":"ls"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'a.txt' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: denied' },
    ]);
    expect(mapper.finalText).toBe('Found a.txt');
    expect(mapper.error).toBeUndefined();
    // The result's session totals replace the per-message counts.
    expect(mapper.usage).toEqual({ promptTokens: 25, completionTokens: 7, modelCalls: 2 });
  });

  it('reports an error result', () => {
    const mapper = new ClaudeStreamMapper();
    feed(mapper, [{ type: 'result', subtype: 'error_max_turns', is_error: true }]);
    expect(mapper.error).toBe('Claude Code ended with error_max_turns');
    expect(mapper.finalText).toBeUndefined();
  });
});

describe('CodexStreamMapper', () => {
  it('maps commands, file changes and agent messages; sums usage per turn', () => {
    const mapper = new CodexStreamMapper();
    const messages = feed(mapper, [
      { type: 'thread.started', thread_id: 't' },
      { type: 'item.completed', item: { id: 'r', type: 'reasoning', text: 'think' } },
      { type: 'item.started', item: { id: 'c', type: 'command_execution', command: 'ls' } },
      {
        type: 'item.completed',
        item: {
          id: 'c',
          type: 'command_execution',
          command: 'ls',
          aggregated_output: 'x\n',
          exit_code: 0,
        },
      },
      {
        type: 'item.completed',
        item: {
          id: 'f',
          type: 'file_change',
          changes: [{ path: 'a', kind: 'add' }],
          status: 'completed',
        },
      },
      { type: 'item.completed', item: { id: 'm', type: 'agent_message', text: 'Done it.' } },
      {
        type: 'turn.completed',
        usage: { input_tokens: 30, cached_input_tokens: 10, output_tokens: 4 },
      },
      { type: 'turn.completed', usage: { input_tokens: 5, output_tokens: 1 } },
    ]);
    expect(messages.map((m) => m.role)).toEqual([
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(messages[0]).toMatchObject({
      tool_calls: [{ id: 'c', function: { name: 'shell', arguments: '{"command":"ls"}' } }],
    });
    expect(messages[1]).toEqual({ role: 'tool', tool_call_id: 'c', content: 'x\n\n[exit code 0]' });
    expect(messages[2]).toMatchObject({ tool_calls: [{ function: { name: 'apply_patch' } }] });
    expect(messages[4]).toEqual({ role: 'assistant', content: 'Done it.' });
    expect(mapper.finalText).toBe('Done it.');
    expect(mapper.usage).toEqual({ promptTokens: 35, completionTokens: 5, modelCalls: 2 });
  });

  it('understands the older item_type / assistant_message shape', () => {
    const mapper = new CodexStreamMapper();
    const messages = feed(mapper, [
      { type: 'item.completed', item: { id: 'i', item_type: 'assistant_message', text: 'Hi.' } },
    ]);
    expect(messages).toEqual([{ role: 'assistant', content: 'Hi.' }]);
    expect(mapper.finalText).toBe('Hi.');
  });

  it('remembers a failed turn', () => {
    const mapper = new CodexStreamMapper();
    feed(mapper, [{ type: 'turn.failed', error: { message: 'quota exceeded' } }]);
    expect(mapper.error).toBe('quota exceeded');
  });
});

describe('GeminiStreamMapper', () => {
  it('joins streamed deltas, maps tool use and results, takes stats from the result', () => {
    const mapper = new GeminiStreamMapper();
    const messages = feed(mapper, [
      { type: 'init', session_id: 'g' },
      { type: 'message', role: 'user', content: 'hi' },
      { type: 'message', role: 'assistant', content: 'Checking ', delta: true },
      { type: 'message', role: 'assistant', content: 'files.', delta: true },
      { type: 'tool_use', tool_name: 'ls', tool_id: 't1', parameters: { path: '.' } },
      { type: 'tool_result', tool_id: 't1', status: 'success', output: 'a.txt' },
      { type: 'tool_result', tool_id: 't2', status: 'error', error: { message: 'nope' } },
      { type: 'message', role: 'assistant', content: 'All ', delta: true },
      { type: 'message', role: 'assistant', content: 'good.', delta: true },
      {
        type: 'result',
        status: 'success',
        stats: { input_tokens: 9, output_tokens: 3, tool_calls: 1 },
      },
    ]);
    expect(messages).toEqual([
      { role: 'assistant', content: 'Checking files.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 't1', type: 'function', function: { name: 'ls', arguments: '{"path":"."}' } },
        ],
      },
      { role: 'tool', tool_call_id: 't1', content: 'a.txt' },
      { role: 'tool', tool_call_id: 't2', content: 'Error: nope' },
      { role: 'assistant', content: 'All good.' },
    ]);
    expect(mapper.finalText).toBe('All good.');
    expect(mapper.usage).toEqual({ promptTokens: 9, completionTokens: 3, modelCalls: 2 });
  });

  it('flushes an unfinished streamed answer and records error events', () => {
    const mapper = new GeminiStreamMapper();
    const messages = feed(mapper, [
      { type: 'message', role: 'assistant', content: 'partial', delta: true },
      { type: 'error', severity: 'warning', message: 'loop detected' },
      { type: 'error', severity: 'error', message: 'API key invalid' },
    ]);
    expect(messages).toEqual([{ role: 'assistant', content: 'partial' }]);
    expect(mapper.error).toBe('API key invalid');
  });
});
