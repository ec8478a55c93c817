import { DEFAULT_MAX_OUTPUT_BYTES, runCommand, type CommandResult } from '../command-runner';
import { newCommandId, withStreamedOutput } from '../command-output';
import { COMMAND_FINISHED_EVENT, COMMAND_STARTED_EVENT } from '../../../runs';
import { ToolArgumentError } from './file-tools';
import { functionTool, type AgentTool, type ToolScope } from './tool.types';

export const runCommandTool: AgentTool = {
  definition: functionTool(
    'run_command',
    'Run a bash command in the workspace. Returns JSON {exit_code, output, timed_out, killed?}; ' +
      'output is stdout and stderr combined, shortened in the middle when long; killed says ' +
      'which sandbox limit ended the command. Commands cannot be interactive.',
    {
      command: { type: 'string', description: 'The bash command to run.' },
      timeout_seconds: {
        type: 'number',
        description: 'Kill the command after this many seconds (capped by the run limits).',
      },
    },
    ['command'],
  ),
  async run(args, scope) {
    const { command, timeout_seconds: requested } = args;
    if (typeof command !== 'string' || command.trim() === '') {
      throw new ToolArgumentError('run_command needs a non-empty "command" string');
    }
    if (requested !== undefined && (typeof requested !== 'number' || !(requested > 0))) {
      throw new ToolArgumentError('"timeout_seconds" must be a positive number');
    }
    const limit = scope.commandTimeoutSeconds;
    const timeoutSeconds = Math.min(requested ?? limit, limit);
    const result = await runObservedCommand(scope, command, (onOutput) =>
      runCommand({
        sandbox: scope.sandbox,
        command,
        env: scope.commandEnv,
        timeoutMs: timeoutSeconds * 1000,
        signal: scope.signal,
        maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES,
        onOutput,
      }),
    );
    return {
      content: JSON.stringify({
        exit_code: result.exitCode,
        output: result.output,
        timed_out: result.timedOut,
        ...(result.limitHit ? { killed: result.limitHit } : {}),
      }),
    };
  },
};

/** Longest command text a timeline event repeats. */
const COMMAND_TEXT_CHARS = 2000;

/**
 * Runs the command between a `command_started` and a `command_finished` timeline event
 * (`{command_id, exit_code, timed_out, killed?, duration_ms}`, or `error` when it could not
 * finish), with its output streamed live in between (see CommandOutputStream); where the
 * execution can hold its events, a short command's are one write (ExecutionTimeline.hold).
 * The events are for watching: one that cannot be recorded fails no command (a run the execution
 * lost stops it through its signal).
 */
async function runObservedCommand(
  scope: ToolScope,
  command: string,
  run: (onOutput?: (chunk: Buffer) => void) => Promise<CommandResult>,
): Promise<CommandResult> {
  const emitEvent = scope.emitEvent;
  if (!emitEvent) return run();
  const release = scope.holdEvents?.();
  const emit = (type: string, payload: Record<string, unknown>) =>
    emitEvent(type, payload).catch(() => undefined);
  const commandId = newCommandId();
  const startedAt = Date.now();
  await emit(COMMAND_STARTED_EVENT, {
    command_id: commandId,
    command: command.slice(0, COMMAND_TEXT_CHARS),
  });
  const finished = async (fields: Record<string, unknown>) => {
    await emit(COMMAND_FINISHED_EVENT, {
      command_id: commandId,
      ...fields,
      duration_ms: Date.now() - startedAt,
    });
    await release?.().catch(() => undefined);
  };
  let result: CommandResult;
  try {
    result = await withStreamedOutput(emitEvent, commandId, run);
  } catch (err) {
    // The execution ends with this error; the timeline still says the command did not finish.
    await finished({ exit_code: null, error: (err as Error).message });
    throw err;
  }
  await finished({
    exit_code: result.exitCode,
    timed_out: result.timedOut,
    ...(result.limitHit ? { killed: result.limitHit } : {}),
  });
  return result;
}

export const finishTool: AgentTool = {
  definition: functionTool(
    'finish',
    'End the run when the task is complete.',
    { summary: { type: 'string', description: 'The final answer: what was done and the result.' } },
    ['summary'],
  ),
  run(args) {
    if (typeof args.summary !== 'string') {
      throw new ToolArgumentError('finish needs a "summary" string');
    }
    return Promise.resolve({ content: 'Run finished.', finishSummary: args.summary });
  },
};
