import { Logger } from '@nestjs/common';
import type { ErrorCode } from '../../../../common/errors/error-codes';
import { describeApprovalRule, type AgentConfig } from '../../../run-config';
import type { ChatMessage, Harness, HarnessContext, HarnessResult } from '../harness.types';
import { McpSetupError } from '../mcp/mcp-toolset';
import { McpServers, VendorMcpConfigDir, VendorMcpSetup } from './vendor-mcp-config';
import { lastLines, runVendorCli, VendorCliExit } from './vendor-cli-runner';
import { parseEventLine, VendorStreamMapper } from './vendor-stream';

/** What a vendor harness reads of the run's config to find its key. */
export type AuthSecretsConfig = Pick<AgentConfig, 'harness_auth_secrets'>;

/**
 * A harness that runs a vendor's agent CLI non-interactively in the run's workspace: the team
 * secret named in `harness_auth_secrets` authenticates it, its JSON event stream becomes the
 * conversation, and that raw stream is kept as the run's transcript.
 */
export abstract class VendorCliHarness implements Harness {
  abstract readonly type: string;
  /** The product name used in messages (e.g. "Claude Code"). */
  abstract readonly cliName: string;
  /** The setting that points at the binary, named in the "not installed" message. */
  abstract readonly binSetting: string;
  private readonly logger = new Logger('VendorCliHarness');

  protected constructor(readonly binary: string) {}

  abstract args(prompt: string, ctx: HarnessContext): string[];
  abstract authSecretName(config: AuthSecretsConfig): { field: string; name: string | undefined };
  abstract authEnv(secret: string): Record<string, string>;
  abstract createMapper(): VendorStreamMapper;
  /** Points the CLI at the run's MCP servers (config files written into `dir`). */
  abstract mcpSetup(servers: McpServers, dir: VendorMcpConfigDir): Promise<VendorMcpSetup>;

  async run(ctx: HarnessContext): Promise<HarnessResult> {
    const mapper = this.createMapper();
    const fail = (errorCode: ErrorCode, summary: string): HarnessResult => ({
      outcome: 'failed',
      errorCode,
      summary,
      usage: mapper.usage,
    });
    const unenforceable = (ctx.approvals?.rules ?? []).filter((rule) => !('egress' in rule));
    if (unenforceable.length > 0) {
      return fail(
        'operation_not_supported',
        `the ${this.type} harness cannot apply approval rules to ${this.cliName}'s own tool ` +
          `calls (${unenforceable.map(describeApprovalRule).join('; ')}); run with the built-in ` +
          'oz harness, or without command, write_outside and mcp_tool rules',
      );
    }
    const { field, name } = this.authSecretName(ctx.config);
    if (!name) {
      return fail(
        'integration_not_configured',
        `the ${this.type} harness needs config.harness_auth_secrets.${field}: the name of a team secret holding the ${this.cliName} credentials`,
      );
    }
    const secret = await ctx.teamSecret(name);
    if (secret === null) {
      return fail(
        'integration_not_configured',
        `harness_auth_secrets.${field}: there is no team secret named "${name}"`,
      );
    }

    const servers = ctx.config.mcp_servers ?? {};
    let mcpDir: VendorMcpConfigDir;
    try {
      mcpDir = await VendorMcpConfigDir.create(servers, ctx.sandbox);
    } catch (err) {
      if (!(err instanceof McpSetupError)) throw err;
      return fail(err.code, err.message);
    }
    try {
      const mcp = mcpDir.path ? await this.mcpSetup(servers, mcpDir) : { args: [], env: {} };
      const auth = { secret, label: `${name} (harness_auth_secrets.${field})` };
      return await this.execute(ctx, mapper, auth, mcp);
    } finally {
      await mcpDir.remove();
    }
  }

  private async execute(
    ctx: HarnessContext,
    mapper: VendorStreamMapper,
    auth: { secret: string; label: string },
    mcp: VendorMcpSetup,
  ): Promise<HarnessResult> {
    for (const text of ctx.userMessages) await ctx.recordMessage({ role: 'user', content: text });
    await ctx.emitEvent('harness_started', {
      harness: this.type,
      cli: this.binary,
      mcp_servers: Object.keys(ctx.config.mcp_servers ?? {}),
    });
    const exit = await runVendorCli({
      sandbox: ctx.sandbox,
      file: this.binary,
      // Global options (MCP configuration) lead, ahead of any subcommand and the prompt.
      args: [...mcp.args, ...this.args(vendorPrompt(ctx), ctx)],
      // Only the run's own environment and the CLI's credentials: nothing of the server leaks.
      env: { ...ctx.commandEnv, ...mcp.env, ...this.authEnv(auth.secret) },
      timeoutMs: ctx.limits.deadline - Date.now(),
      signal: ctx.signal,
      onLine: async (line) => {
        const event = parseEventLine(line);
        if (!event) return;
        for (const message of mapper.map(event)) await ctx.recordMessage(message);
      },
    });
    for (const message of mapper.flush()) await ctx.recordMessage(message);
    const result = this.outcome(exit, mapper, auth.label);
    return { ...result, usage: mapper.usage, rawTranscript: exit.stdout };
  }

  private outcome(
    exit: VendorCliExit,
    mapper: VendorStreamMapper,
    authSecret: string,
  ): Omit<HarnessResult, 'usage'> {
    if (exit.aborted) return { outcome: 'cancelled', summary: 'Run cancelled' };
    if (exit.startError) {
      this.logger.warn(`${this.binary} could not be started: ${exit.startError.message}`);
      const missing = exit.startError.code === 'ENOENT' || exit.startError.code === 'EACCES';
      return {
        outcome: 'failed',
        errorCode: 'environment_setup_failed',
        summary: missing
          ? `the ${this.type} harness needs the ${this.cliName} CLI, but "${this.binary}" is not installed on this machine (set ${this.binSetting})`
          : `${this.cliName} could not be started: ${exit.startError.message}`,
      };
    }
    if (exit.timedOut) {
      return {
        outcome: 'failed',
        errorCode: 'budget_exceeded',
        summary: `${this.cliName} was stopped: the run exceeded its maximum run time`,
      };
    }
    if (exit.exitCode !== 0 || mapper.error !== undefined) {
      const detail = [mapper.error, exit.stderrTail].filter(Boolean).join('\n');
      const how = exit.exitCode === null ? 'was killed' : `exited with code ${exit.exitCode}`;
      const output = detail ? `:\n${lastLines(detail)}` : '';
      // The team's credentials were refused: the user must fix the secret (FAILED, not retried).
      if (AUTH_FAILURE.test(detail)) {
        return {
          outcome: 'failed',
          errorCode: 'external_authentication_required',
          summary: `${this.cliName} ${how}: authentication failed; check the team secret ${authSecret}${output}`,
        };
      }
      // Anything else is unexpected on our side of the run (ERROR, retryable).
      return {
        outcome: 'failed',
        errorCode: 'internal_error',
        summary: `${this.cliName} ${how}${output}`,
      };
    }
    return { outcome: 'succeeded', summary: mapper.finalText?.trim() || 'Done.' };
  }
}

/** What the vendor CLIs print when their API key or login is refused. */
const AUTH_FAILURE =
  /\b(401|unauthori[sz]ed|authentication[_ ](failed|error)|invalid[ _-](x-)?api[ _-]key|api key not valid|incorrect api key|not logged in|please (run \S+ )?log ?in)\b/i;

const PLAN_MODE_INSTRUCTIONS =
  'You are in plan mode: only investigate and produce a plan. Do not create, modify or delete ' +
  'files and do not run commands that change anything; reply with the plan.';

/**
 * The CLI starts fresh every execution, so a continuation hands it the earlier conversation as
 * text ahead of the new messages. Plan mode and `base_prompt` (which carries a skill) lead as
 * standing instructions.
 */
export function vendorPrompt(ctx: HarnessContext): string {
  const parts: string[] = [];
  if (ctx.mode === 'plan') parts.push(PLAN_MODE_INSTRUCTIONS);
  if (ctx.config.base_prompt) parts.push(ctx.config.base_prompt);
  const earlier = ctx.history.map(renderTurn).filter((t): t is string => t !== undefined);
  if (earlier.length > 0) {
    parts.push(`Conversation so far:\n\n${earlier.join('\n\n')}`);
    parts.push(`New message from the user:\n\n${ctx.userMessages.join('\n\n')}`);
  } else {
    parts.push(ctx.userMessages.join('\n\n'));
  }
  return parts.join('\n\n---\n\n');
}

function renderTurn(message: ChatMessage): string | undefined {
  if (message.role !== 'user' && message.role !== 'assistant') return undefined;
  const content = message.content;
  const text =
    typeof content === 'string'
      ? content
      : (content ?? []).map((p) => ('text' in p ? p.text : '')).join('');
  if (!text) return undefined;
  return `${message.role === 'user' ? 'User' : 'Assistant'}: ${text}`;
}
