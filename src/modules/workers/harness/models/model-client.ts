import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionFunctionTool,
} from 'openai/resources/chat/completions';
import type { ProviderEndpoint } from '../../../models';
import type { ChatMessage } from '../harness.types';
import { TracedModelClient } from './traced-model-client';

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

/** The client of the provider's API; its calls are traced as spans of run `runId`. */
export function createModelClient(provider: ProviderEndpoint, runId: string): ModelClient {
  return new TracedModelClient(new ProviderSdkClient(provider), provider, runId);
}

/**
 * The provider SDK's client, loaded at the first call: the two SDKs are ≈ 400 modules that a
 * process making no model calls (the API, the ingress, most test apps) would load for nothing.
 */
class ProviderSdkClient implements ModelClient {
  private client?: Promise<ModelClient>;

  constructor(private readonly provider: ProviderEndpoint) {}

  async complete(request: ModelRequest, signal: AbortSignal): Promise<ModelCompletion> {
    this.client ??= this.load();
    return (await this.client).complete(request, signal);
  }

  private async load(): Promise<ModelClient> {
    if (this.provider.api === 'anthropic_messages') {
      const { AnthropicMessagesClient } = await import('./anthropic-messages-client');
      return new AnthropicMessagesClient(this.provider);
    }
    const { OpenAiChatClient } = await import('./openai-chat-client');
    return new OpenAiChatClient(this.provider);
  }
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
