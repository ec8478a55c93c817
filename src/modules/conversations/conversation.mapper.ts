import type { JsonObject } from '../../common/json';
import { STORED_REQUEST_ID } from './stored-message';
import { toolCategory } from './tool-categories';
import {
  DENIED_PREFIX,
  type ActionCategory,
  type ContentBlock,
  type ConversationMessage,
  type ConversationStep,
} from './conversation.types';

/** One stored chat message (a `run_messages` row) with the execution that produced it. */
export interface StoredMessage {
  id: string;
  runId: string;
  executionId: number;
  message: JsonObject;
  createdAt: Date;
}

/** A timeline event of one execution (`run_events`), shown as an `event` block. */
export interface StoredEvent {
  id: string;
  runId: string;
  executionId: number;
  eventType: string;
  payload: JsonObject | null;
  occurredAt: Date;
}

/** What an execution of a run did, for the step's description and summary. */
export interface ExecutionInfo {
  runId: string;
  executionId: number;
  title: string;
  summary?: string;
  /** The run's harness type (`oz` when unset): which tool names mean which category. */
  harness?: string;
}

/** The Oz category of a tool call made by a run of `harness` (`oz` unless said otherwise). */
export function categoryOf(toolName: string, harness?: string): ActionCategory {
  return toolCategory(toolName, harness);
}

/**
 * Builds the normalized conversation: one step per execution of each run (oldest first), chat
 * messages as Oz messages, tool calls as `action` blocks and tool results as `action_result`
 * blocks that carry the name and category of the call they answer. System prompts are left out.
 */
export function toConversationSteps(
  rows: StoredMessage[],
  executions: ExecutionInfo[],
  events: StoredEvent[] = [],
): ConversationStep[] {
  const callsById = new Map<string, { name: string; category: ActionCategory }>();
  const steps = new Map<string, ConversationStep>();
  const info = new Map(executions.map((e) => [`${e.runId}:${e.executionId}`, e]));
  for (const row of rows) {
    const stepId = `${row.runId}:${row.executionId}`;
    let step = steps.get(stepId);
    if (!step) {
      const execution = info.get(stepId);
      step = {
        id: stepId,
        description: execution
          ? `${execution.title} (execution ${execution.executionId})`
          : undefined,
        summary: execution?.summary,
        started_at: row.createdAt.toISOString(),
        messages: [],
        steps: [],
      };
      steps.set(stepId, step);
    }
    step.completed_at = row.createdAt.toISOString();
    const message = toMessage(row, callsById, info.get(stepId)?.harness);
    if (message) step.messages.push(message);
  }
  for (const event of events) addEvent(steps, info, event);
  return [...steps.values()].sort((a, b) => a.started_at!.localeCompare(b.started_at!));
}

/**
 * Adds a timeline event as a `system` message with one `event` block, in time order among the
 * step's messages (an execution with events only, e.g. a failed setup, still gets its step).
 */
function addEvent(
  steps: Map<string, ConversationStep>,
  info: Map<string, ExecutionInfo>,
  event: StoredEvent,
): void {
  const stepId = `${event.runId}:${event.executionId}`;
  const at = event.occurredAt.toISOString();
  let step = steps.get(stepId);
  if (!step) {
    const execution = info.get(stepId);
    step = {
      id: stepId,
      description: execution
        ? `${execution.title} (execution ${execution.executionId})`
        : undefined,
      summary: execution?.summary,
      started_at: at,
      completed_at: at,
      messages: [],
      steps: [],
    };
    steps.set(stepId, step);
  }
  const message: ConversationMessage = {
    role: 'system',
    content: [{ type: 'event', name: event.eventType, data: event.payload ?? {} }],
    message_ids: [event.id],
    timestamp: at,
  };
  const after = step.messages.findIndex((m) => m.timestamp > at);
  if (after === -1) step.messages.push(message);
  else step.messages.splice(after, 0, message);
  if (at < step.started_at!) step.started_at = at;
  if (at > step.completed_at!) step.completed_at = at;
}

/** Tool calls seen so far in a conversation, by call id (tool results name the call they answer). */
export type CallIndex = Map<string, { name: string; category: ActionCategory }>;

/**
 * One stored message as an Oz conversation message (null for messages the conversation leaves
 * out, e.g. system prompts); adds its tool calls to `callsById`.
 */
export function toMessage(
  row: StoredMessage,
  callsById: CallIndex,
  harness: string | undefined,
): ConversationMessage | null {
  const m = row.message;
  const requestId = m[STORED_REQUEST_ID];
  const base = {
    message_ids: [row.id],
    ...(typeof requestId === 'string' && requestId ? { request_id: requestId } : {}),
    timestamp: row.createdAt.toISOString(),
  };
  const content: ContentBlock[] = [];
  const text = textOf(m.content);
  switch (m.role) {
    case 'user':
      if (text) content.push({ type: 'text', text, message_id: row.id });
      return { role: 'user', content, ...base };
    case 'assistant':
      if (text) content.push({ type: 'text', text, message_id: row.id });
      for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
        const action = toAction(call as JsonObject, row.id, harness);
        if (!action) continue;
        callsById.set(action.id, { name: action.name, category: action.category });
        content.push(action);
      }
      return { role: 'assistant', content, ...base };
    case 'tool': {
      const actionId = typeof m.tool_call_id === 'string' ? m.tool_call_id : '';
      const call = callsById.get(actionId) ?? { name: 'unknown', category: 'integration' };
      const output = parseObject(text) ?? { text };
      content.push({
        type: 'action_result',
        action_id: actionId,
        category: call.category,
        name: call.name,
        state: resultState(output),
        output,
        message_id: row.id,
      });
      return { role: 'tool', content, ...base };
    }
    default:
      return null;
  }
}

function toAction(
  call: JsonObject,
  messageId: string,
  harness: string | undefined,
): Extract<ContentBlock, { type: 'action' }> | null {
  const fn = call.function as JsonObject | undefined;
  if (typeof call.id !== 'string' || !fn || typeof fn.name !== 'string') return null;
  const raw = typeof fn.arguments === 'string' ? fn.arguments : '';
  return {
    type: 'action',
    id: call.id,
    category: categoryOf(fn.name, harness),
    name: fn.name,
    input: parseObject(raw) ?? { arguments: raw },
    message_id: messageId,
  };
}

/**
 * A result is denied when a built-in tool was refused (plan mode; text starting "Denied: "), and
 * failed when it says so: a non-zero exit code, a timeout, an `error` field, or a plain-text
 * result of the built-in or MCP tools that starts with "Error: ".
 */
function resultState(output: Record<string, unknown>): 'completed' | 'failed' | 'denied' {
  if (typeof output.text === 'string' && output.text.startsWith(DENIED_PREFIX)) return 'denied';
  if (typeof output.exit_code === 'number' && output.exit_code !== 0) return 'failed';
  if (output.timed_out === true || typeof output.error === 'string') return 'failed';
  if (typeof output.text === 'string' && output.text.startsWith('Error: ')) return 'failed';
  return 'completed';
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (part && typeof part === 'object' && 'text' in part ? String(part.text) : ''))
    .filter(Boolean)
    .join('\n');
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
