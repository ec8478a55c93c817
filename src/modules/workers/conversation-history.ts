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
 *
 * `awaited`: ids of tool calls that wait for a person's decision (a run that was BLOCKED). When
 * the conversation ends with the assistant message holding one of them, that message's calls
 * without a result stay open: the resumed harness answers them in order (runs the approved call,
 * reports a denial or an answer, evaluates the calls after it).
 */
export function closeDanglingToolCalls(
  history: ChatMessage[],
  awaited: ReadonlySet<string> = new Set(),
): ChatMessage[] {
  const answered = new Set(history.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
  const open = openTrailingCalls(history, answered, awaited);
  const repaired: ChatMessage[] = [];
  for (const message of history) {
    repaired.push(message);
    if (message.role !== 'assistant' || !message.tool_calls || message === open) continue;
    for (const call of message.tool_calls) {
      if (!answered.has(call.id)) {
        repaired.push({ role: 'tool', tool_call_id: call.id, content: INTERRUPTED });
      }
    }
  }
  return repaired;
}

/** The last assistant message, if only tool results follow it and it holds an awaited call. */
function openTrailingCalls(
  history: ChatMessage[],
  answered: ReadonlySet<string>,
  awaited: ReadonlySet<string>,
): ChatMessage | undefined {
  if (awaited.size === 0) return undefined;
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i];
    if (message.role === 'tool') continue;
    if (message.role !== 'assistant') return undefined;
    const waiting = (message.tool_calls ?? []).some(
      (call) => awaited.has(call.id) && !answered.has(call.id),
    );
    return waiting ? message : undefined;
  }
  return undefined;
}

/**
 * The calls of the conversation's last assistant message that have no result yet, in order:
 * what a resumed execution answers before anything else. Empty when the conversation does not
 * end with such a message.
 */
export function unansweredTrailingCalls(
  history: ChatMessage[],
): { id: string; name: string; arguments: string }[] {
  const answered = new Set<string>();
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i];
    if (message.role === 'tool') {
      answered.add(message.tool_call_id);
      continue;
    }
    if (message.role !== 'assistant') return [];
    return (message.tool_calls ?? []).flatMap((call) =>
      call.type === 'function' && !answered.has(call.id)
        ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments }]
        : [],
    );
  }
  return [];
}
