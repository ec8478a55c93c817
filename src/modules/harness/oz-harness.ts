import { Injectable } from '@nestjs/common';
import OpenAI, { APIConnectionError, APIError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionAssistantMessageParam,
  ChatCompletionFunctionTool,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions';
import type { ErrorCode } from '../../common/errors/error-codes';
import { REPORT_ARTIFACT_TOOL, runReportArtifactTool } from '../artifacts/report-artifact.tool';
import { DEFAULT_MAX_OUTPUT_BYTES, runCommand } from './command-runner';
import type {
  ChatMessage,
  Harness,
  HarnessContext,
  HarnessResult,
  TokenUsage,
} from './harness.types';

/** Upper bound for one model request; the run's deadline usually cuts in earlier. */
const MODEL_REQUEST_TIMEOUT_MS = 10 * 60 * 1000;
/** The largest delay setTimeout accepts; longer waits are done in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const TOOLS: ChatCompletionFunctionTool[] = [
  {
    type: 'function',
    function: {
      name: 'run_command',
      description:
        'Run a bash command in the workspace. Returns JSON {exit_code, output, timed_out}; output ' +
        'is stdout and stderr combined, shortened in the middle when long. Commands cannot be ' +
        'interactive.',
      parameters: {
        type: 'object',
        properties: {
          command: { type: 'string', description: 'The bash command to run.' },
          timeout_seconds: {
            type: 'number',
            description: 'Kill the command after this many seconds (capped by the run limits).',
          },
        },
        required: ['command'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'finish',
      description: 'End the run when the task is complete.',
      parameters: {
        type: 'object',
        properties: {
          summary: {
            type: 'string',
            description: 'The final answer: what was done and the result.',
          },
        },
        required: ['summary'],
        additionalProperties: false,
      },
    },
  },
];

/** The built-in agent loop against any OpenAI-compatible chat-completions endpoint. */
@Injectable()
export class OzHarness implements Harness {
  readonly type = 'oz';

  run(context: HarnessContext): Promise<HarnessResult> {
    return new OzRun(context).execute();
  }
}

type ToolOutcome = { content: string; finishSummary?: string };
type ModelReply = { message: ChatCompletionAssistantMessageParam } | { result: HarnessResult };

/** One execution of a run: the conversation, its usage and its stop conditions. */
class OzRun {
  private readonly usage: TokenUsage = { promptTokens: 0, completionTokens: 0, modelCalls: 0 };
  private readonly messages: ChatMessage[] = [];
  /** Aborted on cancellation or when the deadline passes; stops model calls and commands. */
  private readonly stop = new AbortController();
  private readonly startedAt = Date.now();
  private readonly client: OpenAI;

  constructor(private readonly ctx: HarnessContext) {
    this.client = new OpenAI({
      baseURL: ctx.model.provider.baseUrl,
      apiKey: ctx.model.provider.apiKey ?? 'not-needed',
      // Explicit nulls keep the client from reading the server's own OPENAI_* variables.
      organization: null,
      project: null,
      webhookSecret: null,
      maxRetries: 2,
      timeout: MODEL_REQUEST_TIMEOUT_MS,
    });
  }

  async execute(): Promise<HarnessResult> {
    const unwatch = this.watchStopConditions();
    try {
      return await this.loop();
    } finally {
      unwatch();
    }
  }

  private async loop(): Promise<HarnessResult> {
    const { limits, userMessages, history } = this.ctx;
    const stoppedAtStart = this.stoppedResult();
    if (stoppedAtStart) return stoppedAtStart;

    this.messages.push({ role: 'system', content: this.systemPrompt() }, ...history);
    for (const text of userMessages) await this.append({ role: 'user', content: text });

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
      await this.append(reply.message);

      let finishSummary: string | undefined;
      for (const call of reply.message.tool_calls ?? []) {
        const outcome: ToolOutcome =
          finishSummary === undefined
            ? await this.executeTool(call)
            : { content: 'Not run: the run was already finished by an earlier tool call.' };
        const stoppedByTool = this.stoppedResult();
        if (stoppedByTool) return stoppedByTool;
        await this.append({ role: 'tool', tool_call_id: call.id, content: outcome.content });
        finishSummary ??= outcome.finishSummary;
      }

      const followups = await this.ctx.takeFollowups();
      if (followups.length > 0) {
        for (const text of followups) await this.append({ role: 'user', content: text });
        continue;
      }
      if (finishSummary !== undefined) return this.succeeded(finishSummary);
      if (!reply.message.tool_calls?.length) return this.succeeded(textOf(reply.message));
    }
  }

  private systemPrompt(): string {
    const { workspaceDir, limits, config, mode } = this.ctx;
    const parts = [
      'You are Ambient, an autonomous software agent working on a task for a user. You work ' +
        `alone in a private workspace directory (${workspaceDir}); no one answers questions ` +
        'while you work, so make reasonable assumptions and keep going until the task is done.',
      'Tools:\n' +
        '- run_command: runs a bash command in the workspace and returns its exit code and ' +
        `output. Each command is limited to ${limits.commandTimeoutSeconds} seconds and cannot ` +
        'be interactive.\n' +
        '- finish: ends the run with a summary of what you did and the result.' +
        (this.ctx.reportArtifact
          ? '\n- report_artifact: records a plan, pull request, file, screenshot or link for the user.'
          : ''),
      'Inspect before you change things and verify your changes when you can. When the task is ' +
        'complete, call finish or reply without a tool call; that reply is your final answer.',
    ];
    if (mode === 'plan') {
      parts.push(
        'You are in plan mode: only investigate and produce a plan. Do not create, modify or ' +
          'delete files and do not run commands that change anything; reply with the plan.',
      );
    }
    if (config.base_prompt) parts.push(config.base_prompt);
    return parts.join('\n\n');
  }

  private async append(message: ChatMessage): Promise<void> {
    this.messages.push(message);
    await this.ctx.recordMessage(message);
  }

  private async callModel(): Promise<ModelReply> {
    const { model } = this.ctx;
    let completion: ChatCompletion;
    try {
      const request = this.client.chat.completions.create(
        { model: model.providerModel, messages: this.messages, tools: this.tools() },
        { signal: this.stop.signal },
      );
      // The client sleeps between retries without watching the signal; do not wait for that.
      completion = await untilAborted(request, this.stop.signal);
    } catch (err) {
      return { result: this.stoppedResult() ?? this.modelFailure(err) };
    }

    this.usage.modelCalls += 1;
    this.usage.promptTokens += completion.usage?.prompt_tokens ?? 0;
    this.usage.completionTokens += completion.usage?.completion_tokens ?? 0;

    const answer = completion.choices?.[0]?.message;
    if (!answer) {
      return {
        result: this.failed(
          'resource_unavailable',
          `model provider "${model.provider.name}" returned a response without a message`,
        ),
      };
    }
    const toolCalls = answer.tool_calls ?? [];
    const message: ChatCompletionAssistantMessageParam =
      toolCalls.length > 0
        ? { role: 'assistant', content: answer.content ?? null, tool_calls: toolCalls }
        : { role: 'assistant', content: answer.content ?? '' };
    return { message };
  }

  /** Maps an error of the OpenAI client to a result; anything else is a bug and is rethrown. */
  private modelFailure(err: unknown): HarnessResult {
    const provider = `model provider "${this.ctx.model.provider.name}"`;
    if (err instanceof APIConnectionError) {
      const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
      return this.failed(
        'resource_unavailable',
        `could not reach ${provider} (${err.message}${cause})`,
      );
    }
    if (!(err instanceof APIError) || err.status === undefined) throw err;

    const body = err.error as { message?: unknown } | undefined;
    const detail = typeof body?.message === 'string' ? body.message : err.message;
    const status = err.status;
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

  private async executeTool(call: ChatCompletionMessageToolCall): Promise<ToolOutcome> {
    if (call.type !== 'function') {
      return { content: `Error: unsupported tool call type "${call.type}".` };
    }
    const { name, arguments: rawArgs } = call.function;
    const known = this.tools().map((tool) => tool.function.name);
    if (!known.includes(name)) {
      return { content: `Error: unknown tool "${name}". Available tools: ${known.join(', ')}.` };
    }
    let args: unknown;
    try {
      args = JSON.parse(rawArgs || '{}');
    } catch (err) {
      return {
        content: `Error: the arguments of ${name} are not valid JSON (${(err as Error).message}).`,
      };
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return { content: `Error: the arguments of ${name} must be a JSON object.` };
    }
    if (name === 'report_artifact' && this.ctx.reportArtifact) {
      const report = this.ctx.reportArtifact.bind(this.ctx);
      return {
        content: await runReportArtifactTool(
          args as Record<string, unknown>,
          this.ctx.workspaceDir,
          report,
        ),
      };
    }
    return name === 'finish'
      ? this.finishTool(args as Record<string, unknown>)
      : this.runCommandTool(args as Record<string, unknown>);
  }

  /** The built-in tools, and report_artifact when this execution can report artifacts. */
  private tools(): ChatCompletionFunctionTool[] {
    return this.ctx.reportArtifact ? [...TOOLS, REPORT_ARTIFACT_TOOL] : TOOLS;
  }

  private finishTool(args: Record<string, unknown>): ToolOutcome {
    if (typeof args.summary !== 'string') {
      return { content: 'Error: finish needs a "summary" string.' };
    }
    return { content: 'Run finished.', finishSummary: args.summary };
  }

  private async runCommandTool(args: Record<string, unknown>): Promise<ToolOutcome> {
    const { command, timeout_seconds: requested } = args;
    if (typeof command !== 'string' || command.trim() === '') {
      return { content: 'Error: run_command needs a non-empty "command" string.' };
    }
    if (requested !== undefined && (typeof requested !== 'number' || !(requested > 0))) {
      return { content: 'Error: "timeout_seconds" must be a positive number.' };
    }
    const limit = this.ctx.limits.commandTimeoutSeconds;
    const timeoutSeconds = Math.min(requested ?? limit, limit);
    const result = await runCommand({
      command,
      cwd: this.ctx.workspaceDir,
      env: this.ctx.commandEnv,
      timeoutMs: timeoutSeconds * 1000,
      signal: this.stop.signal,
      maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES,
    });
    return {
      content: JSON.stringify({
        exit_code: result.exitCode,
        output: result.output,
        timed_out: result.timedOut,
      }),
    };
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

  private succeeded(summary: string): HarnessResult {
    return { outcome: 'succeeded', summary: summary.trim() || 'Done.', usage: this.usage };
  }

  private failed(errorCode: ErrorCode, summary: string): HarnessResult {
    return { outcome: 'failed', summary, errorCode, usage: this.usage };
  }
}

function textOf(message: ChatCompletionAssistantMessageParam): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** Settles like `promise`, but rejects as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  promise.catch(() => undefined); // A rejection after the abort is expected and uninteresting.
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
