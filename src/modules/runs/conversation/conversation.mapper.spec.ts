import { categoryOf, StoredMessage, toConversationSteps } from './conversation.mapper';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const row = (id: number, executionId: number, message: object): StoredMessage => ({
  id: String(id),
  runId: 'run-1',
  executionId,
  message,
  createdAt: at(id),
});

describe('toConversationSteps', () => {
  it('sends the stored request_id of a model response on its turn and the results of its calls', () => {
    const [step] = toConversationSteps(
      [
        row(1, 1, { role: 'user', content: 'Go' }),
        row(2, 1, {
          role: 'assistant',
          content: null,
          request_id: 'chatcmpl-1',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'finish', arguments: '{}' } },
          ],
        }),
        row(3, 1, { role: 'tool', tool_call_id: 'c1', content: 'ok', request_id: 'chatcmpl-1' }),
      ],
      [{ runId: 'run-1', executionId: 1, title: 'Go' }],
    );
    expect(step.messages.map((m) => m.request_id)).toEqual([undefined, 'chatcmpl-1', 'chatcmpl-1']);
    expect(step.messages[0]).not.toHaveProperty('request_id');
  });

  it('makes one step per execution with text, action and action_result blocks', () => {
    const steps = toConversationSteps(
      [
        row(1, 1, { role: 'user', content: 'Fix it' }),
        row(2, 1, {
          role: 'assistant',
          content: 'Looking',
          tool_calls: [
            {
              id: 'c1',
              type: 'function',
              function: { name: 'run_command', arguments: '{"command":"ls"}' },
            },
            { id: 'c2', type: 'function', function: { name: 'github__search', arguments: 'oops' } },
          ],
        }),
        row(3, 1, { role: 'tool', tool_call_id: 'c1', content: '{"exit_code":1,"output":"x"}' }),
        row(4, 1, { role: 'tool', tool_call_id: 'c2', content: 'plain text' }),
        row(5, 2, { role: 'user', content: [{ type: 'text', text: 'Again' }] }),
        row(6, 2, { role: 'system', content: 'hidden' }),
      ],
      [
        { runId: 'run-1', executionId: 1, title: 'Fix' },
        { runId: 'run-1', executionId: 2, title: 'Fix', summary: 'Done' },
      ],
    );
    expect(steps.map((s) => s.id)).toEqual(['run-1:1', 'run-1:2']);
    expect(steps[0]).toMatchObject({
      description: 'Fix (execution 1)',
      started_at: at(1).toISOString(),
      completed_at: at(4).toISOString(),
      steps: [],
    });
    expect(steps[1].summary).toBe('Done');
    const [user, assistant, result1, result2] = steps[0].messages;
    expect(user).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'Fix it', message_id: '1' }],
      message_ids: ['1'],
      timestamp: at(1).toISOString(),
    });
    expect(assistant.content).toEqual([
      { type: 'text', text: 'Looking', message_id: '2' },
      {
        type: 'action',
        id: 'c1',
        category: 'command',
        name: 'run_command',
        input: { command: 'ls' },
        message_id: '2',
      },
      {
        type: 'action',
        id: 'c2',
        category: 'integration',
        name: 'github__search',
        input: { arguments: 'oops' },
        message_id: '2',
      },
    ]);
    expect(result1.content[0]).toMatchObject({
      type: 'action_result',
      action_id: 'c1',
      name: 'run_command',
      category: 'command',
      state: 'failed',
      output: { exit_code: 1, output: 'x' },
    });
    expect(result2.content[0]).toMatchObject({
      action_id: 'c2',
      category: 'integration',
      state: 'completed',
      output: { text: 'plain text' },
    });
    expect(steps[1].messages).toHaveLength(1);
    expect(steps[1].messages[0].content[0]).toMatchObject({ type: 'text', text: 'Again' });
  });

  it('places timeline events as system messages with an event block, in time order', () => {
    const steps = toConversationSteps(
      [row(2, 1, { role: 'user', content: 'Go' }), row(4, 1, { role: 'assistant', content: 'Ok' })],
      [],
      [
        {
          id: 'e1',
          runId: 'run-1',
          executionId: 1,
          eventType: 'agent_started',
          payload: null,
          occurredAt: at(1),
        },
        {
          id: 'e2',
          runId: 'run-1',
          executionId: 1,
          eventType: 'setup_step',
          payload: { n: 1 },
          occurredAt: at(3),
        },
        {
          id: 'e3',
          runId: 'run-1',
          executionId: 2,
          eventType: 'oz_run_failed',
          payload: null,
          occurredAt: at(5),
        },
      ],
    );
    expect(steps.map((s) => s.id)).toEqual(['run-1:1', 'run-1:2']);
    expect(steps[0].started_at).toBe(at(1).toISOString());
    expect(steps[0].messages.map((m) => m.role)).toEqual(['system', 'user', 'system', 'assistant']);
    expect(steps[0].messages[2]).toEqual({
      role: 'system',
      content: [{ type: 'event', name: 'setup_step', data: { n: 1 } }],
      message_ids: ['e2'],
      timestamp: at(3).toISOString(),
    });
    expect(steps[1].messages[0].content[0]).toMatchObject({ type: 'event', name: 'oz_run_failed' });
  });

  it('maps the built-in tools to Oz categories', () => {
    expect(categoryOf('run_command')).toBe('command');
    expect(categoryOf('edit_file')).toBe('files');
    expect(categoryOf('search_files')).toBe('search');
    expect(categoryOf('report_artifact')).toBe('documents');
    expect(categoryOf('some_mcp_tool')).toBe('integration');
  });
});
