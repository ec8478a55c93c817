import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../../config/app-config';
import type { ChatMessage, HarnessContext, TokenUsage } from '../harness.types';
import { VendorCliHarness, AuthSecretsConfig } from './vendor-cli-harness';
import {
  assistantText,
  assistantToolCall,
  num,
  obj,
  resultText,
  StreamEvent,
  str,
  toolResult,
  VendorStreamMapper,
} from './vendor-stream';
import {
  geminiMcpSetup,
  McpServers,
  VendorMcpConfigDir,
  VendorMcpSetup,
} from './vendor-mcp-config';

/**
 * Gemini CLI `--output-format stream-json` events: `init`, `message` (assistant text arrives
 * in `delta` chunks), `tool_use`, `tool_result`, `error` and a closing `result` with stats.
 */
export class GeminiStreamMapper implements VendorStreamMapper {
  finalText: string | undefined;
  error: string | undefined;
  usage: TokenUsage = { promptTokens: 0, completionTokens: 0, modelCalls: 0 };
  private pendingText = '';
  private lastText: string | undefined;

  map(event: StreamEvent): ChatMessage[] {
    if (event.type === 'message') {
      if (event.role !== 'assistant') return [];
      const content = str(event.content) ?? '';
      if (event.delta === true) {
        this.pendingText += content;
        return [];
      }
      return [...this.flush(), ...this.text(content)];
    }
    const messages = this.flush();
    switch (event.type) {
      case 'tool_use': {
        const id = str(event.tool_id) ?? '';
        messages.push(assistantToolCall(id, str(event.tool_name) ?? 'tool', event.parameters));
        break;
      }
      case 'tool_result': {
        const failed = event.status === 'error';
        const text = failed
          ? `Error: ${str(obj(event.error).message) ?? resultText(event.output)}`
          : resultText(event.output);
        messages.push(toolResult(str(event.tool_id) ?? '', text));
        break;
      }
      case 'error':
        if (event.severity === 'error') this.error = str(event.message) ?? 'Gemini CLI error';
        break;
      case 'result':
        this.result(event);
        break;
    }
    return messages;
  }

  flush(): ChatMessage[] {
    const text = this.pendingText;
    this.pendingText = '';
    return this.text(text);
  }

  private text(text: string): ChatMessage[] {
    if (!text) return [];
    this.lastText = text;
    return [assistantText(text)];
  }

  private result(event: StreamEvent): void {
    if (event.status === 'error') {
      this.error = str(obj(event.error).message) ?? 'Gemini CLI ended with an error';
    } else {
      this.finalText = this.lastText;
    }
    const stats = obj(event.stats);
    this.usage = {
      promptTokens: num(stats.input_tokens),
      completionTokens: num(stats.output_tokens),
      modelCalls: Math.max(1, num(stats.tool_calls) + 1),
    };
  }
}

/**
 * `gemini -p <prompt> --output-format stream-json --yolo [--model m]` (`--approval-mode plan`
 * instead of `--yolo` for a plan-mode run).
 */
@Injectable()
export class GeminiHarness extends VendorCliHarness {
  readonly type = 'gemini';
  readonly cliName = 'Gemini CLI';
  readonly binSetting = 'AMBIENT_GEMINI_BIN';

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'vendorClis'>) {
    super(config.vendorClis.geminiBin);
  }

  args(prompt: string, ctx: HarnessContext): string[] {
    const model = ctx.config.harness?.model_id;
    return [
      '-p',
      prompt,
      '--output-format',
      'stream-json',
      // Approve every tool call: nobody is there to answer a prompt.
      ...(ctx.mode === 'plan' ? ['--approval-mode', 'plan'] : ['--yolo']),
      ...(model ? ['--model', model] : []),
    ];
  }

  authSecretName(config: AuthSecretsConfig) {
    return {
      field: 'gemini_auth_secret_name',
      name: config.harness_auth_secrets?.gemini_auth_secret_name,
    };
  }

  authEnv(secret: string): Record<string, string> {
    // The workspace is new to the CLI; headless runs in an untrusted folder would be refused.
    return { GEMINI_API_KEY: secret, GEMINI_CLI_TRUST_WORKSPACE: 'true' };
  }

  mcpSetup(servers: McpServers, dir: VendorMcpConfigDir): Promise<VendorMcpSetup> {
    return geminiMcpSetup(servers, dir);
  }

  createMapper(): VendorStreamMapper {
    return new GeminiStreamMapper();
  }
}
