import type { ChatMessage } from '../harness.types';
import {
  fromAnthropicMessage,
  toAnthropicMessages,
  toAnthropicTools,
} from './anthropic-translation';

describe("Anthropic Messages translation (the harness's chat form ↔ Messages API)", () => {
  it('keeps system prompts apart and merges tool results and a follow-up into one user turn', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are Ambient.' },
      { role: 'developer', content: 'Be brief.' },
      { role: 'user', content: 'List and count' },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{"dir":"."}' } },
          { id: 'call.2', type: 'function', function: { name: 'wc', arguments: '{broken' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'a.txt' },
      { role: 'tool', tool_call_id: 'call.2', content: [{ type: 'text', text: '1' }] },
      { role: 'user', content: 'Also say hi' },
      { role: 'assistant', content: '' },
      { role: 'user', content: 'Please' },
    ];
    expect(toAnthropicMessages(messages)).toEqual({
      system: 'You are Ambient.\n\nBe brief.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'List and count' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', id: 'call_1', name: 'ls', input: { dir: '.' } },
            { type: 'tool_use', id: 'call_2', name: 'wc', input: { invalid_json: '{broken' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: 'a.txt' },
            { type: 'tool_result', tool_use_id: 'call_2', content: '1' },
            { type: 'text', text: 'Also say hi' },
            // The empty assistant turn is dropped, so the next user text joins this turn.
            { type: 'text', text: 'Please' },
          ],
        },
      ],
    });
  });

  it('sends images given as data URLs inline and others by URL', () => {
    const { messages } = toAnthropicMessages([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.test/a.png' } },
        ],
      },
    ]);
    expect(messages[0].content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.test/a.png' } },
    ]);
  });

  it('describes function tools by name, description and input schema', () => {
    expect(
      toAnthropicTools([
        {
          type: 'function',
          function: {
            name: 'read_file',
            description: 'Reads a file.',
            parameters: { type: 'object', properties: { path: { type: 'string' } } },
          },
        },
        { type: 'function', function: { name: 'finish' } },
      ]),
    ).toEqual([
      {
        name: 'read_file',
        description: 'Reads a file.',
        input_schema: { type: 'object', properties: { path: { type: 'string' } } },
      },
      { name: 'finish', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it('turns a reply into an assistant turn: text joined, tool_use blocks as tool calls', () => {
    expect(
      fromAnthropicMessage({ content: [{ type: 'text', text: 'Hi', citations: null }] }),
    ).toEqual({ role: 'assistant', content: 'Hi' });
    expect(
      fromAnthropicMessage({
        content: [
          { type: 'text', text: 'Reading.', citations: null },
          { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a' } },
        ],
      } as never),
    ).toEqual({
      role: 'assistant',
      content: 'Reading.',
      tool_calls: [
        {
          id: 'toolu_1',
          type: 'function',
          function: { name: 'read_file', arguments: '{"path":"a"}' },
        },
      ],
    });
  });
});
