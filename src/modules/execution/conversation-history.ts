import type { ChatMessage } from './harness/harness.types';

const INTERRUPTED = JSON.stringify({
  exit_code: null,
  output: 'Interrupted: the execution ended before this tool call finished.',
  timed_out: false,
});

/**
 * Providers reject a conversation in which an assistant tool call has no tool result. A cancelled
 * or crashed execution can leave such calls behind; answer them as interrupted so the
 * conversation can be continued.
 */
export function closeDanglingToolCalls(history: ChatMessage[]): ChatMessage[] {
  const answered = new Set(history.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
  const repaired: ChatMessage[] = [];
  for (const message of history) {
    repaired.push(message);
    if (message.role !== 'assistant' || !message.tool_calls) continue;
    for (const call of message.tool_calls) {
      if (!answered.has(call.id)) {
        repaired.push({ role: 'tool', tool_call_id: call.id, content: INTERRUPTED });
      }
    }
  }
  return repaired;
}
