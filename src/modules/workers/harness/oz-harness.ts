import { Injectable } from '@nestjs/common';
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions';
import { EgressGuard } from '../../../common/egress/egress-guard';
import type { ErrorCode } from '../../../common/errors/error-codes';
import { messageText } from './message-text';
import { withRequestId } from '../../runs';
import { McpSetupError, McpToolset } from './mcp/mcp-toolset';
import { SandboxLostError } from '../sandbox/sandbox.types';
import { createModelClient } from './models/create-model-client';
import { ModelCallError, ModelClient, ModelCompletion } from './models/model-client';
import { Toolbox } from './tools/toolbox';
import { toolError } from './tools/tool.types';
import { ApprovalSteps, ToolStep } from './approval-steps';
import { systemPrompt } from './system-prompt';
import type {
  ApprovalRequestDraft,
  ChatMessage,
  Harness,
  HarnessContext,
  HarnessResult,
  TokenUsage,
} from './harness.types';

/** The largest delay setTimeout accepts; longer waits are done in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** How long one MCP server may take to start and list its tools. */
const MCP_CONNECT_TIMEOUT_MS = 60_000;

/**
 * The built-in agent loop, against the run's model through its provider's API (OpenAI-compatible
 * chat completions, or Anthropic's Messages).
 */
@Injectable()
export class OzHarness implements Harness {
  readonly type = 'oz';

  /** `egress`: the policy of `url` MCP servers, which this process connects to. */
  constructor(private readonly egress: EgressGuard = new EgressGuard()) {}

  run(context: HarnessContext): Promise<HarnessResult> {
    return new OzRun(context, this.egress).execute();
  }
}

type ModelReply =
  { message: ChatCompletionAssistantMessageParam; requestId?: string } | { result: HarnessResult };

/** Tool calls answered: how the run ends, or the summary a finish call gave (if one did). */
type Answered = { result: HarnessResult } | { finishSummary?: string };

/** One execution of a run: the conversation, its usage and its stop conditions. */
class OzRun {
  private readonly usage: TokenUsage = { promptTokens: 0, completionTokens: 0, modelCalls: 0 };
  private readonly messages: ChatMessage[] = [];
  /** Aborted on cancellation or when the deadline passes; stops model calls and commands. */
  private readonly stop = new AbortController();
  private readonly startedAt = Date.now();
  private readonly client: ModelClient;
  private readonly approvals: ApprovalSteps;
  private toolbox!: Toolbox;

  constructor(
    private readonly ctx: HarnessContext,
    private readonly egress: EgressGuard,
  ) {
    this.client = createModelClient(ctx.model.provider, ctx.runId);
    this.approvals = new ApprovalSteps(ctx.approvals);
  }

  async execute(): Promise<HarnessResult> {
    const unwatch = this.watchStopConditions();
    let mcp = McpToolset.empty();
    try {
      const stoppedAtStart = this.stoppedResult();
      if (stoppedAtStart) return stoppedAtStart;
      try {
        mcp = await this.connectMcpServers();
      } catch (err) {
        if (!(err instanceof McpSetupError)) throw err;
        return this.stoppedResult() ?? this.failed(err.code, err.message);
      }
      this.toolbox = new Toolbox(
        {
          workspaceDir: this.ctx.workspaceDir,
          sandbox: this.ctx.sandbox,
          commandEnv: this.ctx.commandEnv,
          commandTimeoutSeconds: this.ctx.limits.commandTimeoutSeconds,
          signal: this.stop.signal,
          mode: this.ctx.mode,
          emitEvent: (eventType, payload) => this.ctx.emitEvent(eventType, payload),
          holdEvents: this.ctx.holdEvents,
        },
        mcp,
        this.ctx.reportArtifact?.bind(this.ctx),
        this.approvals.canAsk,
      );
      return await this.loop();
    } catch (err) {
      // A write refused because the execution lost its run aborts the signal before it throws:
      // end as stopped, with the usage so far (a cancelled execution still reports its cost).
      const stopped = this.ctx.signal.aborted ? this.stoppedResult() : undefined;
      if (stopped) return stopped;
      // With the usage so far: the model's turns before the loss were spent.
      if (err instanceof SandboxLostError) return this.failed(err.code, err.message);
      throw err;
    } finally {
      unwatch();
      await mcp.close();
    }
  }

  private async connectMcpServers(): Promise<McpToolset> {
    const servers = this.ctx.config.mcp_servers ?? {};
    if (Object.keys(servers).length === 0) return McpToolset.empty();
    const toolset = await McpToolset.connect(servers, {
      sandbox: this.ctx.sandbox,
      path: this.ctx.commandEnv.PATH,
      egress: this.egress,
      timeoutMs: MCP_CONNECT_TIMEOUT_MS,
      signal: this.stop.signal,
    });
    await this.ctx.emitEvent('mcp_servers_connected', {
      servers: Object.keys(servers),
      tools: toolset.definitions().map((tool) => tool.function.name),
    });
    return toolset;
  }

  private async loop(): Promise<HarnessResult> {
    const { limits, userMessages, history } = this.ctx;
    this.messages.push(
      { role: 'system', content: systemPrompt(this.ctx, this.approvals.canAsk) },
      ...history,
    );
    const resumed = await this.resume();
    if ('result' in resumed) return resumed.result;
    for (const text of userMessages) await this.append({ role: 'user', content: text });
    if (resumed.finishSummary !== undefined && userMessages.length === 0) {
      return this.succeeded(resumed.finishSummary);
    }

    for (let turn = 1; ; turn++) {
      const stopped = this.stoppedResult();
      if (stopped) return stopped;
      if (turn > limits.maxTurns) {
        return this.failed(
          'budget_exceeded',
          `the run stopped after reaching its limit of ${limits.maxTurns} model turns`,
        );
      }

      const reply = await this.callModel();
      if ('result' in reply) return reply.result;
      await this.append(reply.message, reply.requestId);

      const answered = await this.answerCalls(reply.message.tool_calls ?? [], reply.requestId);
      if ('result' in answered) return answered.result;
      const refusedHost = this.approvals.egressAsk();
      if (refusedHost) return this.blocked(refusedHost);

      const followups = await this.ctx.takeFollowups();
      if (followups.length > 0) {
        for (const text of followups) await this.append({ role: 'user', content: text });
        continue;
      }
      if (answered.finishSummary !== undefined) return this.succeeded(answered.finishSummary);
      if (!reply.message.tool_calls?.length)
        return this.succeeded(messageText(reply.message.content));
    }
  }

  /**
   * Answers tool calls in order and records each result. A call that must wait for a person
   * ends the execution BLOCKED there: the calls after it get no result until it resumes.
   * `decided`: the step of a call a person already decided about (a resumed execution).
   */
  private async answerCalls(
    calls: ChatCompletionMessageToolCall[],
    requestId?: string,
    decided?: (call: ChatCompletionMessageToolCall) => Promise<ToolStep | undefined>,
  ): Promise<Answered> {
    let finishSummary: string | undefined;
    for (const call of calls) {
      const step: ToolStep =
        finishSummary === undefined
          ? ((await decided?.(call)) ?? (await this.executeTool(call)))
          : { content: 'Not run: the run was already finished by an earlier tool call.' };
      const stoppedByTool = this.stoppedResult();
      if (stoppedByTool) return { result: stoppedByTool };
      if ('pending' in step) return { result: this.blocked(step.pending) };
      await this.append({ role: 'tool', tool_call_id: call.id, content: step.content }, requestId);
      finishSummary ??= step.finishSummary;
    }
    return { finishSummary };
  }

  /**
   * A resumed BLOCKED run: the calls left open when it blocked are answered first, with the
   * decisions people made (see ApprovalSteps), then the decisions on refused hosts are told.
   */
  private async resume(): Promise<Answered> {
    const calls = await this.approvals.pendingCalls(this.ctx.history);
    const answered = await this.answerCalls(calls, undefined, (call) =>
      this.approvals.decidedStep(call, () => this.executeTool(call, true)),
    );
    if ('result' in answered) return answered;
    const waiting = await this.approvals.egressNotes((note) =>
      this.append({ role: 'user', content: note }),
    );
    return waiting ? { result: this.blocked(waiting) } : answered;
  }

  /**
   * Adds a message to the conversation. `requestId` (the model response it came from or answers)
   * is stored beside it for the Oz conversation's `request_id`, never sent back to a provider.
   */
  private async append(message: ChatMessage, requestId?: string): Promise<void> {
    this.messages.push(message);
    await this.ctx.recordMessage(withRequestId(message, requestId));
  }

  private async callModel(): Promise<ModelReply> {
    const { model } = this.ctx;
    const refusal = await this.ctx.budgetRefusal?.(this.usage);
    if (refusal) return { result: this.failed('budget_exceeded', refusal) };
    let completion: ModelCompletion;
    try {
      completion = await this.client.complete(
        {
          model: model.providerModel,
          messages: this.messages,
          tools: this.toolbox.definitions(),
          maxOutputTokens: model.maxOutputTokens,
          reasoningLevel: model.reasoningLevel,
        },
        this.stop.signal,
      );
    } catch (err) {
      return { result: this.stoppedResult() ?? this.modelFailure(err) };
    }

    this.usage.modelCalls += 1;
    this.usage.promptTokens += completion.promptTokens;
    this.usage.completionTokens += completion.completionTokens;
    if (!completion.message) {
      return {
        result: this.failed(
          'resource_unavailable',
          `model provider "${model.provider.name}" returned a response without a message`,
        ),
      };
    }
    return { message: completion.message, requestId: completion.requestId };
  }

  /** Maps a provider's failure to a result; anything else is a bug and is rethrown. */
  private modelFailure(err: unknown): HarnessResult {
    if (!(err instanceof ModelCallError)) throw err;
    const provider = `model provider "${this.ctx.model.provider.name}"`;
    const { status, message: detail } = err;
    if (status === undefined) {
      return this.failed('resource_unavailable', `could not reach ${provider} (${detail})`);
    }
    if (status === 401 || status === 403) {
      return this.failed(
        'external_authentication_required',
        `${provider} rejected the credentials with HTTP ${status}: ${detail}`,
      );
    }
    if (status === 400 || status === 404 || status === 422) {
      return this.failed(
        'invalid_request',
        `${provider} rejected the request with HTTP ${status}: ${detail}`,
      );
    }
    return this.failed('resource_unavailable', `${provider} failed with HTTP ${status}: ${detail}`);
  }

  /**
   * Runs a call once the approval rules allow it (`approved`: a person approved this call). Bad
   * arguments and denials become tool results; a call that needs a person returns `pending`.
   */
  private async executeTool(
    call: ChatCompletionMessageToolCall,
    approved = false,
  ): Promise<ToolStep> {
    if (call.type !== 'function') return toolError(`unsupported tool call type "${call.type}".`);
    const { name, arguments: rawArgs } = call.function;
    let args: unknown;
    try {
      args = JSON.parse(rawArgs || '{}');
    } catch (err) {
      return toolError(`the arguments of ${name} are not valid JSON (${(err as Error).message}).`);
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return toolError(`the arguments of ${name} must be a JSON object.`);
    }
    const facts = { id: call.id, name, args: args as Record<string, unknown> };
    if (name === 'ask_user' && this.approvals.canAsk) return this.approvals.question(facts);
    const subject = this.toolbox.approvalSubject(name, facts.args);
    const verdict = this.approvals.verdict(facts, subject, approved);
    if (verdict.effect === 'deny') return verdict.outcome;
    if (verdict.effect === 'ask') return { pending: verdict.pending };
    return this.toolbox.run(name, facts.args);
  }

  /** Aborts `stop` on cancellation or at the deadline; returns the clean-up. */
  private watchStopConditions(): () => void {
    const { signal, limits } = this.ctx;
    const abort = (): void => this.stop.abort();
    signal.addEventListener('abort', abort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const armDeadline = (): void => {
      const remaining = limits.deadline - Date.now();
      if (remaining <= 0) return abort();
      timer = setTimeout(armDeadline, Math.min(remaining, MAX_TIMER_MS));
    };
    armDeadline();
    return () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
    };
  }

  /** The result to return when the run was cancelled or ran out of time, otherwise undefined. */
  private stoppedResult(): HarnessResult | undefined {
    if (this.ctx.signal.aborted) {
      return { outcome: 'cancelled', summary: 'Run cancelled', usage: this.usage };
    }
    if (Date.now() >= this.ctx.limits.deadline) {
      // The harness only knows the deadline, so the run time is counted from this execution.
      const seconds = Math.max(1, Math.round((this.ctx.limits.deadline - this.startedAt) / 1000));
      return this.failed(
        'budget_exceeded',
        `the run exceeded its maximum run time of ${seconds} seconds`,
      );
    }
    return undefined;
  }

  /** The run waits for a person: the request is recorded with its move to BLOCKED. */
  private blocked(pending: ApprovalRequestDraft): HarnessResult {
    return { outcome: 'blocked', summary: pending.summary, pending, usage: this.usage };
  }

  private succeeded(summary: string): HarnessResult {
    return { outcome: 'succeeded', summary: summary.trim() || 'Done.', usage: this.usage };
  }

  private failed(errorCode: ErrorCode, summary: string): HarnessResult {
    return { outcome: 'failed', summary, errorCode, usage: this.usage };
  }
}
