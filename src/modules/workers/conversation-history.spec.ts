import { closeDanglingToolCalls, unansweredTrailingCalls } from './conversation-history';

describe('closeDanglingToolCalls', () => {
  const call = (id: string) => ({
    id,
    type: 'function' as const,
    function: { name: 'run_command', arguments: '{}' },
  });

  it('answers tool calls left without a result, right after their assistant message', () => {
    const history = closeDanglingToolCalls([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
      { role: 'tool', tool_call_id: 'a', content: 'ok' },
      { role: 'user', content: 'next' },
    ]);
    expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user']);
    const synthetic = history.find((m) => m.role === 'tool' && m.tool_call_id === 'b');
    expect(String(synthetic?.content)).toContain('Interrupted');
  });

  it('leaves a complete conversation unchanged', () => {
    const complete = [
      { role: 'user' as const, content: 'go' },
      { role: 'assistant' as const, content: null, tool_calls: [call('a')] },
      { role: 'tool' as const, tool_call_id: 'a', content: 'ok' },
    ];
    expect(closeDanglingToolCalls(complete)).toEqual(complete);
  });

  it('keeps the last message open when one of its calls awaits a decision, and closes older ones', () => {
    const history = [
      { role: 'user' as const, content: 'go' },
      { role: 'assistant' as const, content: null, tool_calls: [call('old')] },
      { role: 'user' as const, content: 'again' },
      { role: 'assistant' as const, content: null, tool_calls: [call('a'), call('b'), call('c')] },
      { role: 'tool' as const, tool_call_id: 'a', content: 'ok' },
    ];
    const kept = closeDanglingToolCalls(history, new Set(['b']));
    expect(kept.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['old', 'a']);
    expect(unansweredTrailingCalls(kept).map((c) => c.id)).toEqual(['b', 'c']);
    // An awaited call that is not in the last message does not keep anything open.
    const closed = closeDanglingToolCalls(history, new Set(['old']));
    expect(unansweredTrailingCalls(closed)).toEqual([]);
  });
});
