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
import { codexMcpSetup, McpServers, VendorMcpConfigDir, VendorMcpSetup } from './vendor-mcp-config';

/**
 * `codex exec --json` events: thread/turn lifecycle (`turn.completed` carries usage), and
 * `item.completed` for each agent message, command, file change, MCP call or web search.
 */
export class CodexStreamMapper implements VendorStreamMapper {
  finalText: string | undefined;
  error: string | undefined;
  usage: TokenUsage = { promptTokens: 0, completionTokens: 0, modelCalls: 0 };

  map(event: StreamEvent): ChatMessage[] {
    switch (event.type) {
      case 'item.completed':
        return this.item(obj(event.item));
      case 'turn.completed': {
        const usage = obj(event.usage);
        this.usage.promptTokens += num(usage.input_tokens);
        this.usage.completionTokens += num(usage.output_tokens);
        this.usage.modelCalls += 1;
        return [];
      }
      case 'turn.failed':
        this.error = str(obj(event.error).message) ?? 'the turn failed';
        return [];
      case 'error':
        this.error = str(event.message) ?? 'Codex reported an error';
        return [];
      default:
        return [];
    }
  }

  flush(): ChatMessage[] {
    return [];
  }

  private item(item: StreamEvent): ChatMessage[] {
    const id = str(item.id) ?? '';
    // Releases before the item schema settled called these `item_type` / `assistant_message`.
    switch (item.type ?? item.item_type) {
      case 'agent_message':
      case 'assistant_message': {
        const text = str(item.text) ?? '';
        this.finalText = text;
        return text ? [assistantText(text)] : [];
      }
      case 'command_execution': {
        const exitCode = item.exit_code;
        const output = str(item.aggregated_output) ?? '';
        return [
          assistantToolCall(id, 'shell', { command: item.command }),
          toolResult(
            id,
            typeof exitCode === 'number' ? `${output}\n[exit code ${exitCode}]` : output,
          ),
        ];
      }
      case 'file_change':
        return [
          assistantToolCall(id, 'apply_patch', { changes: item.changes }),
          toolResult(id, str(item.status) ?? 'completed'),
        ];
      case 'mcp_tool_call':
        return [
          assistantToolCall(
            id,
            `${str(item.server) ?? 'mcp'}.${str(item.tool) ?? 'tool'}`,
            item.arguments,
          ),
          toolResult(id, resultText(item.result ?? obj(item.error).message ?? item.status)),
        ];
      case 'web_search':
        return [
          assistantToolCall(id, 'web_search', { query: item.query }),
          toolResult(id, resultText(item.results ?? 'searched')),
        ];
      default:
        return []; // reasoning, todo lists and non-fatal warnings are not conversation turns
    }
  }
}

/**
 * `codex exec --json --skip-git-repo-check --sandbox workspace-write [--model m]
 * [-c model_reasoning_effort=<level>] -- <prompt>` (`--sandbox read-only` for a plan-mode run).
 */
@Injectable()
export class CodexHarness extends VendorCliHarness {
  readonly type = 'codex';
  readonly cliName = 'Codex';
  readonly binSetting = 'AMBIENT_CODEX_BIN';

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'vendorClis'>) {
    super(config.vendorClis.codexBin);
  }

  args(prompt: string, ctx: HarnessContext): string[] {
    const { model_id: model, reasoning_level: effort } = ctx.config.harness ?? {};
    return [
      'exec',
      '--json',
      // The workspace is a prepared directory, not necessarily a git repository.
      '--skip-git-repo-check',
      '--sandbox',
      ctx.mode === 'plan' ? 'read-only' : 'workspace-write',
      ...(model ? ['--model', model] : []),
      ...(effort ? ['-c', `model_reasoning_effort=${JSON.stringify(effort)}`] : []),
      '--',
      prompt,
    ];
  }

  authSecretName(config: AuthSecretsConfig) {
    return {
      field: 'codex_auth_secret_name',
      name: config.harness_auth_secrets?.codex_auth_secret_name,
    };
  }

  authEnv(secret: string): Record<string, string> {
    // `codex exec` reads CODEX_API_KEY; OPENAI_API_KEY covers older releases.
    return { CODEX_API_KEY: secret, OPENAI_API_KEY: secret };
  }

  mcpSetup(servers: McpServers, dir: VendorMcpConfigDir): Promise<VendorMcpSetup> {
    return codexMcpSetup(servers, dir);
  }

  createMapper(): VendorStreamMapper {
    return new CodexStreamMapper();
  }
}
