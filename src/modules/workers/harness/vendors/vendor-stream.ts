import type { ChatMessage, TokenUsage } from '../harness.types';

export type StreamEvent = Record<string, unknown>;

/**
 * Turns one vendor CLI's JSON event stream into conversation messages (OpenAI format: assistant
 * text, assistant `tool_calls`, `tool` results), and remembers the final answer and token usage.
 */
export interface VendorStreamMapper {
  /** The messages this event completes (often none: deltas, init and bookkeeping events). */
  map(event: StreamEvent): ChatMessage[];
  /** Messages still buffered when the stream ends (e.g. an unfinished streamed answer). */
  flush(): ChatMessage[];
  /** The final answer, when the stream reported one. */
  readonly finalText: string | undefined;
  /** A failure the stream itself reported (the CLI may still exit 0). */
  readonly error: string | undefined;
  readonly usage: TokenUsage;
}

/** Parses one stdout line; anything that is not a JSON object is not an event. */
export function parseEventLine(line: string): StreamEvent | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as StreamEvent)
      : undefined;
  } catch {
    return undefined;
  }
}

export const str = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;
export const num = (value: unknown): number => (typeof value === 'number' ? value : 0);
export const obj = (value: unknown): StreamEvent =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as StreamEvent) : {};

/** Tool results are stored as text; structured ones as their JSON. */
export function resultText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    return value
      .map((part) =>
        typeof obj(part).text === 'string' ? (obj(part).text as string) : JSON.stringify(part),
      )
      .join('\n');
  }
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

export function assistantText(text: string): ChatMessage {
  return { role: 'assistant', content: text };
}

export function assistantToolCall(id: string, name: string, args: unknown): ChatMessage {
  return {
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id,
        type: 'function',
        function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
      },
    ],
  };
}

export function toolResult(id: string, content: string): ChatMessage {
  return { role: 'tool', tool_call_id: id, content };
}
