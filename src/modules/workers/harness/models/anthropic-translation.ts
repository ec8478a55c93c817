import type Anthropic from '@anthropic-ai/sdk';
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionFunctionTool,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions';
import type { ChatMessage } from '../harness.types';
import { messageText } from '../message-text';

type Block = Anthropic.ContentBlockParam;

/**
 * The harness keeps conversations in OpenAI's chat form; Anthropic's Messages API wants the
 * system prompt apart, tool calls as `tool_use` blocks, their results as `tool_result` blocks of
 * a user turn, and strictly alternating roles.
 */
export function toAnthropicMessages(messages: ChatMessage[]): {
  system: string;
  messages: Anthropic.MessageParam[];
} {
  const system: string[] = [];
  const turns: Anthropic.MessageParam[] = [];
  const push = (role: 'user' | 'assistant', blocks: Block[]): void => {
    if (blocks.length === 0) return; // the API refuses empty turns
    const last = turns.at(-1);
    if (last?.role === role) (last.content as Block[]).push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(messageText(message.content));
        break;
      case 'user':
        push('user', userBlocks(message.content));
        break;
      case 'assistant':
        push('assistant', assistantBlocks(message));
        break;
      case 'tool':
        push('user', [
          {
            type: 'tool_result',
            tool_use_id: toolUseId(message.tool_call_id),
            content: messageText(message.content),
          },
        ]);
        break;
      default:
        break; // legacy function messages never occur in Ambient's conversations
    }
  }
  // Results come first in a user turn, as the API requires; a follow-up's text goes after them.
  for (const turn of turns) {
    if (turn.role === 'user') {
      (turn.content as Block[]).sort(
        (a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'),
      );
    }
  }
  return { system: system.filter(Boolean).join('\n\n'), messages: turns };
}

export function toAnthropicTools(tools: ChatCompletionFunctionTool[]): Anthropic.Tool[] {
  return tools.map(({ function: fn }) => ({
    name: fn.name,
    ...(fn.description ? { description: fn.description } : {}),
    input_schema: (fn.parameters ?? {
      type: 'object',
      properties: {},
    }) as Anthropic.Tool.InputSchema,
  }));
}

/** The reply as the harness's assistant turn: text joined, `tool_use` blocks as tool calls. */
export function fromAnthropicMessage(
  message: Pick<Anthropic.Message, 'content'>,
): ChatCompletionAssistantMessageParam {
  let text = '';
  const toolCalls: ChatCompletionMessageToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  return toolCalls.length > 0
    ? { role: 'assistant', content: text || null, tool_calls: toolCalls }
    : { role: 'assistant', content: text };
}

function userBlocks(content: ChatMessage['content']): Block[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  const blocks: Block[] = [];
  for (const part of content ?? []) {
    if (part.type === 'text' && part.text) blocks.push({ type: 'text', text: part.text });
    if (part.type === 'image_url') {
      const data = /^data:(image\/(?:jpeg|png|gif|webp));base64,(.*)$/s.exec(part.image_url.url);
      blocks.push(
        data
          ? {
              type: 'image',
              source: {
                type: 'base64',
                media_type: data[1] as Anthropic.Base64ImageSource['media_type'],
                data: data[2],
              },
            }
          : { type: 'image', source: { type: 'url', url: part.image_url.url } },
      );
    }
  }
  return blocks;
}

function assistantBlocks(message: ChatCompletionAssistantMessageParam): Block[] {
  const blocks: Block[] = [];
  const text = messageText(message.content);
  if (text) blocks.push({ type: 'text', text });
  for (const call of message.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    blocks.push({
      type: 'tool_use',
      id: toolUseId(call.id),
      name: call.function.name,
      input: parseArguments(call.function.arguments),
    });
  }
  return blocks;
}

/** Arguments a model sent as broken JSON still have to be replayed as an object. */
function parseArguments(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw || '{}');
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { value };
  } catch {
    return { invalid_json: raw };
  }
}

/** Anthropic accepts `[A-Za-z0-9_-]` ids; calls recorded from other providers may have others. */
function toolUseId(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '_') || 'call';
}
