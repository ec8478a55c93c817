import type { ChatMessage } from './conversation.types';

/**
 * The stored form of a chat message may carry the id of the model response it belongs to
 * (`request_id`: the assistant turn, and the tool results answering its calls). It is Ambient's
 * annotation for the Oz conversation's `ConversationMessage.request_id`; providers must never
 * see it, since strict chat APIs refuse unknown message fields.
 */
export const STORED_REQUEST_ID = 'request_id';

export function withRequestId(message: ChatMessage, requestId: string | undefined): ChatMessage {
  if (!requestId) return message;
  return Object.assign({}, message, { [STORED_REQUEST_ID]: requestId });
}

/** A stored message as a provider may be sent it again (the annotation removed). */
export function withoutRequestId(stored: ChatMessage): ChatMessage {
  if (!(STORED_REQUEST_ID in stored)) return stored;
  const { [STORED_REQUEST_ID]: _dropped, ...message } = stored as ChatMessage &
    Record<typeof STORED_REQUEST_ID, unknown>;
  return message as ChatMessage;
}
