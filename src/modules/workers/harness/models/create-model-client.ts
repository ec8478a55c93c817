import type { ProviderEndpoint } from '../../../models';
import type { ModelClient, ModelCompletion, ModelRequest } from './model-client';
import { TracedModelClient } from './traced-model-client';

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
