import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/** One message of a run's conversation as stored (the OpenAI chat message shape). */
export type ChatMessage = ChatCompletionMessageParam;

/** Marks a tool result as a refusal (not a failure); the conversation shows it as `denied`. */
export const DENIED_PREFIX = 'Denied: ';

/** The normalized Oz conversation (`{conversation_id, steps}`), as the API serves it. */
export const ACTION_CATEGORIES = [
  'command',
  'files',
  'search',
  'integration',
  'documents',
  'computer',
  'review',
  'skill',
] as const;
export type ActionCategory = (typeof ACTION_CATEGORIES)[number];

export type ContentBlock =
  | { type: 'text'; text: string; message_id?: string }
  | {
      type: 'action';
      id: string;
      category: ActionCategory;
      name: string;
      input: Record<string, unknown>;
      message_id?: string;
    }
  | {
      type: 'action_result';
      action_id: string;
      category: ActionCategory;
      name: string;
      state: 'running' | 'completed' | 'failed' | 'denied';
      output: Record<string, unknown>;
      message_id?: string;
    }
  | { type: 'event'; name: string; data: Record<string, unknown>; message_id?: string };

export interface ConversationMessage {
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: ContentBlock[];
  message_ids: string[];
  request_id?: string;
  timestamp: string;
}

export interface ConversationStep {
  id: string;
  description?: string;
  summary?: string;
  started_at?: string;
  completed_at?: string;
  messages: ConversationMessage[];
  steps: ConversationStep[];
}

export interface Conversation {
  conversation_id: string;
  steps: ConversationStep[];
}
