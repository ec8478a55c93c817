import { SpanKind } from '@opentelemetry/api';
import { RUN_ID, withSpan } from '../../../../common/tracing';
import type { ProviderEndpoint } from '../../../models';
import type { ModelClient, ModelCompletion, ModelRequest } from './model-client';

/**
 * One CLIENT span per model call (OpenTelemetry's GenAI conventions: `chat <model>`, the
 * provider, the tokens used), the child of the run's execution span.
 */
export class TracedModelClient implements ModelClient {
  constructor(
    private readonly inner: ModelClient,
    private readonly provider: ProviderEndpoint,
    private readonly runId: string,
  ) {}

  complete(request: ModelRequest, signal: AbortSignal): Promise<ModelCompletion> {
    const attributes = {
      [RUN_ID]: this.runId,
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': this.provider.kind.toLowerCase(),
      'gen_ai.request.model': request.model,
      'gen_ai.request.max_tokens': request.maxOutputTokens,
      'ambient.model_provider': this.provider.name,
      'ambient.model_base_url': this.provider.baseUrl,
    };
    const name = `chat ${request.model}`;
    return withSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const completion = await this.inner.complete(request, signal);
      span.setAttributes({
        'gen_ai.usage.input_tokens': completion.promptTokens,
        'gen_ai.usage.output_tokens': completion.completionTokens,
        ...(completion.requestId ? { 'gen_ai.response.id': completion.requestId } : {}),
      });
      return completion;
    });
  }
}
