import Anthropic, { APIConnectionError, APIError } from '@anthropic-ai/sdk';
import type { ProviderEndpoint } from '../../../models';
import {
  fromAnthropicMessage,
  toAnthropicMessages,
  toAnthropicTools,
} from './anthropic-translation';
import {
  MODEL_REQUEST_TIMEOUT_MS,
  ModelCallError,
  ModelClient,
  ModelCompletion,
  ModelRequest,
  unreachable,
  untilAborted,
} from './model-client';
import { Fetch, providerFetch } from './provider-fetch';

/** Anthropic's native Messages API (`POST <base>/v1/messages`). */
export class AnthropicMessagesClient implements ModelClient {
  private readonly client: Anthropic;

  constructor(provider: ProviderEndpoint, fetch: Fetch = providerFetch) {
    this.client = new Anthropic({
      // The SDK adds /v1 itself; catalogues often name the versioned URL.
      baseURL: provider.baseUrl.replace(/\/v1$/, ''),
      apiKey: provider.apiKey ?? 'not-needed',
      // Explicit nulls keep the client from reading the server's own ANTHROPIC_* variables.
      authToken: null,
      webhookKey: null,
      maxRetries: 2,
      timeout: MODEL_REQUEST_TIMEOUT_MS,
      fetch,
    });
  }

  async complete(request: ModelRequest, signal: AbortSignal): Promise<ModelCompletion> {
    const { system, messages } = toAnthropicMessages(request.messages);
    const call = this.client.messages.create(
      {
        model: request.model,
        max_tokens: request.maxOutputTokens,
        messages,
        ...(system ? { system } : {}),
        ...(request.tools.length ? { tools: toAnthropicTools(request.tools) } : {}),
      },
      { signal },
    );
    try {
      const reply = await untilAborted(call, signal);
      const usage = reply.usage;
      return {
        message: fromAnthropicMessage(reply),
        promptTokens:
          (usage?.input_tokens ?? 0) +
          (usage?.cache_read_input_tokens ?? 0) +
          (usage?.cache_creation_input_tokens ?? 0),
        completionTokens: usage?.output_tokens ?? 0,
        ...(typeof reply.id === 'string' && reply.id ? { requestId: reply.id } : {}),
      };
    } catch (err) {
      throw signal.aborted ? err : callError(err);
    }
  }
}

function callError(err: unknown): unknown {
  if (err instanceof APIConnectionError) return unreachable(err);
  if (err instanceof APIError && err.status !== undefined) {
    const body = err.error as { error?: { message?: unknown } } | undefined;
    const detail = body?.error?.message;
    return new ModelCallError(typeof detail === 'string' ? detail : err.message, err.status);
  }
  return err; // anything else is a bug, not a provider's answer
}
