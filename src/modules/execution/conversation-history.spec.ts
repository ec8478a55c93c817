import { closeDanglingToolCalls } from './conversation-history';

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
});
