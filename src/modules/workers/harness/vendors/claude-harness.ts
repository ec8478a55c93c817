import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../../config/app-config';
import type { ChatMessage, HarnessContext, TokenUsage } from '../harness.types';
import { VendorCliHarness, AuthSecretsConfig } from './vendor-cli-harness';
import {
  num,
  obj,
  resultText,
  StreamEvent,
  str,
  toolResult,
  VendorStreamMapper,
} from './vendor-stream';
import {
  claudeMcpSetup,
  McpServers,
  VendorMcpConfigDir,
  VendorMcpSetup,
} from './vendor-mcp-config';

/**
 * Claude Code's `--output-format stream-json` events: `system` (init), `assistant` and `user`
 * messages in the Anthropic Messages format, and a closing `result` with the answer and usage.
 */
export class ClaudeStreamMapper implements VendorStreamMapper {
  finalText: string | undefined;
  error: string | undefined;
  usage: TokenUsage = { promptTokens: 0, completionTokens: 0, modelCalls: 0 };
  private sawResultUsage = false;

  map(event: StreamEvent): ChatMessage[] {
    const message = obj(event.message);
    const parts = Array.isArray(message.content) ? message.content.map(obj) : [];
    switch (event.type) {
      case 'assistant':
        if (!this.sawResultUsage) this.addUsage(obj(message.usage), 1);
        return this.assistant(parts);
      case 'user':
        return parts
          .filter((p) => p.type === 'tool_result')
          .map((p) => {
            const text = resultText(p.content);
            return toolResult(
              str(p.tool_use_id) ?? '',
              p.is_error === true ? `Error: ${text}` : text,
            );
          });
      case 'result':
        this.result(event);
        return [];
      default:
        return [];
    }
  }

  flush(): ChatMessage[] {
    return [];
  }

  private assistant(parts: StreamEvent[]): ChatMessage[] {
    const text = parts
      .filter((p) => p.type === 'text')
      .map((p) => str(p.text) ?? '')
      .join('');
    const calls = parts
      .filter((p) => p.type === 'tool_use')
      .map((p) => ({
        id: str(p.id) ?? '',
        type: 'function' as const,
        function: { name: str(p.name) ?? 'tool', arguments: JSON.stringify(p.input ?? {}) },
      }));
    if (!text && calls.length === 0) return [];
    return [
      {
        role: 'assistant',
        content: text || null,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      },
    ];
  }

  private result(event: StreamEvent): void {
    const text = str(event.result);
    if (event.is_error === true || (str(event.subtype) ?? 'success') !== 'success') {
      this.error = text || `Claude Code ended with ${str(event.subtype) ?? 'an error'}`;
    } else {
      this.finalText = text;
    }
    if (event.usage) {
      // The result carries the totals of the whole session.
      this.sawResultUsage = true;
      this.usage = { promptTokens: 0, completionTokens: 0, modelCalls: 0 };
      this.addUsage(obj(event.usage), num(event.num_turns));
    }
  }

  private addUsage(usage: StreamEvent, calls: number): void {
    this.usage.promptTokens +=
      num(usage.input_tokens) +
      num(usage.cache_read_input_tokens) +
      num(usage.cache_creation_input_tokens);
    this.usage.completionTokens += num(usage.output_tokens);
    this.usage.modelCalls += calls;
  }
}

/**
 * `claude -p <prompt> --output-format stream-json --verbose --permission-mode bypassPermissions
 * [--model m]` (`--permission-mode plan` for a plan-mode run).
 */
@Injectable()
export class ClaudeHarness extends VendorCliHarness {
  readonly type = 'claude';
  readonly cliName = 'Claude Code';
  readonly binSetting = 'AMBIENT_CLAUDE_BIN';

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'vendorClis'>) {
    super(config.vendorClis.claudeBin);
  }

  args(prompt: string, ctx: HarnessContext): string[] {
    const model = ctx.config.harness?.model_id;
    return [
      '-p',
      prompt,
      '--output-format',
      'stream-json',
      '--verbose',
      // Nobody is there to approve tool use; the workspace is the run's own.
      '--permission-mode',
      ctx.mode === 'plan' ? 'plan' : 'bypassPermissions',
      ...(model ? ['--model', model] : []),
    ];
  }

  authSecretName(config: AuthSecretsConfig) {
    return {
      field: 'claude_auth_secret_name',
      name: config.harness_auth_secrets?.claude_auth_secret_name,
    };
  }

  authEnv(secret: string): Record<string, string> {
    return { ANTHROPIC_API_KEY: secret };
  }

  mcpSetup(servers: McpServers, dir: VendorMcpConfigDir): Promise<VendorMcpSetup> {
    return claudeMcpSetup(servers, dir);
  }

  createMapper(): VendorStreamMapper {
    return new ClaudeStreamMapper();
  }
}
