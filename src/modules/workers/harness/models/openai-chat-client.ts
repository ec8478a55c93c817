import OpenAI, { APIConnectionError, APIError } from 'openai';
import type { ProviderEndpoint } from '../../../models';
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

/** OpenAI's chat completions, or any endpoint that speaks them (vLLM, Ollama, LiteLLM …). */
export class OpenAiChatClient implements ModelClient {
  private readonly client: OpenAI;
  /** OpenAI's and Google's endpoints take `reasoning_effort`; other servers may refuse it. */
  private readonly takesReasoningEffort: boolean;

  constructor(provider: ProviderEndpoint, fetch: Fetch = providerFetch) {
    this.takesReasoningEffort = provider.kind === 'OPENAI' || provider.kind === 'GOOGLE';
    this.client = new OpenAI({
      baseURL: provider.baseUrl,
      apiKey: provider.apiKey ?? 'not-needed',
      // Explicit nulls keep the client from reading the server's own OPENAI_* variables.
      organization: null,
      project: null,
      webhookSecret: null,
      maxRetries: 2,
      timeout: MODEL_REQUEST_TIMEOUT_MS,
      fetch,
    });
  }

  async complete(request: ModelRequest, signal: AbortSignal): Promise<ModelCompletion> {
    const call = this.client.chat.completions.create(
      {
        model: request.model,
        messages: request.messages,
        tools: request.tools,
        ...(request.reasoningLevel && this.takesReasoningEffort
          ? { reasoning_effort: request.reasoningLevel as OpenAI.ReasoningEffort }
          : {}),
      },
      { signal },
    );
    try {
      // The client sleeps between retries without watching the signal; do not wait for that.
      const completion = await untilAborted(call, signal);
      const answer = completion.choices?.[0]?.message;
      const toolCalls = answer?.tool_calls ?? [];
      return {
        message: !answer
          ? null
          : toolCalls.length > 0
            ? { role: 'assistant', content: answer.content ?? null, tool_calls: toolCalls }
            : { role: 'assistant', content: answer.content ?? '' },
        promptTokens: completion.usage?.prompt_tokens ?? 0,
        completionTokens: completion.usage?.completion_tokens ?? 0,
        ...(typeof completion.id === 'string' && completion.id ? { requestId: completion.id } : {}),
      };
    } catch (err) {
      throw signal.aborted ? err : callError(err);
    }
  }
}

function callError(err: unknown): unknown {
  if (err instanceof APIConnectionError) return unreachable(err);
  if (err instanceof APIError && err.status !== undefined) {
    const body = err.error as { message?: unknown } | undefined;
    return new ModelCallError(
      typeof body?.message === 'string' ? body.message : err.message,
      err.status,
    );
  }
  return err; // anything else is a bug, not a provider's answer
}
