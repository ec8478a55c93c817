import { DEFAULT_MAX_OUTPUT_BYTES, runCommand } from '../command-runner';
import { ToolArgumentError } from './file-tools';
import { functionTool, type AgentTool } from './tool.types';

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
    const result = await runCommand({
      sandbox: scope.sandbox,
      command,
      env: scope.commandEnv,
      timeoutMs: timeoutSeconds * 1000,
      signal: scope.signal,
      maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES,
    });
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
