import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionFunctionTool,
} from 'openai/resources/chat/completions';
import type { ChatMessage } from '../harness.types';

/** Upper bound for one model request; the run's deadline usually cuts in earlier. */
export const MODEL_REQUEST_TIMEOUT_MS = 10 * 60 * 1000;

export interface ModelRequest {
  /** The provider's own model name. */
  model: string;
  /** The conversation in the harness's (OpenAI chat) form; clients translate as needed. */
  messages: ChatMessage[];
  tools: ChatCompletionFunctionTool[];
  maxOutputTokens: number;
  /** The catalogue's `reasoning_level` (low, medium, high …), for providers that take one. */
  reasoningLevel?: string;
}

export interface ModelCompletion {
  /** The assistant's turn, or null when the provider answered without one. */
  message: ChatCompletionAssistantMessageParam | null;
  promptTokens: number;
  completionTokens: number;
  /** The provider's id of this response (OpenAI `chatcmpl-…`, Anthropic `msg_…`), when it sent one. */
  requestId?: string;
}

/**
 * A provider that could not give an answer: `status` is the HTTP status it answered with,
 * undefined when it could not be reached.
 */
export class ModelCallError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** A provider that could not be reached (connection refused, reset, timed out). */
export function unreachable(err: Error): ModelCallError {
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return new ModelCallError(`${err.message}${cause}`);
}

/** One provider API, as the oz harness uses it: a conversation in, the next assistant turn out. */
export interface ModelClient {
  /** Rejects with ModelCallError, or with the abort reason once `signal` aborts. */
  complete(request: ModelRequest, signal: AbortSignal): Promise<ModelCompletion>;
}

/** Settles like `promise`, but rejects as soon as `signal` aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  promise.catch(() => undefined); // A rejection after the abort is expected and uninteresting.
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
