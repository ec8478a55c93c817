import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { DENIED_PREFIX } from '../../../runs';
import type { Sandbox } from '../../sandbox/sandbox.types';
import type { EmitEvent } from '../command-output';
import type { HoldEvents } from '../execution-timeline';

/** What a tool call produced: the tool result for the model, and the summary if it ends the run. */
export interface ToolOutcome {
  content: string;
  finishSummary?: string;
}

/** What the built-in tools may use of the execution they run in. */
export interface ToolScope {
  /** The workspace on this host: the file tools resolve paths here. */
  workspaceDir: string;
  /** Where run_command runs (the workspace is at `sandbox.workdir` inside). */
  sandbox: Sandbox;
  commandEnv: Record<string, string>;
  commandTimeoutSeconds: number;
  /** Aborted on cancellation or at the deadline. */
  signal: AbortSignal;
  mode: string;
  /**
   * Records timeline events: run_command's start, live output and end. Absent: commands run
   * without them.
   */
  emitEvent?: EmitEvent;
  /** Holds the execution's timeline events to write them together; absent: each as it comes. */
  holdEvents?: HoldEvents;
}

export interface AgentTool {
  definition: ChatCompletionFunctionTool;
  /** Changes the workspace; refused in plan mode. */
  writes?: boolean;
  run(args: Record<string, unknown>, scope: ToolScope): Promise<ToolOutcome>;
}

/** A tool result that tells the model what went wrong. */
export function toolError(message: string): ToolOutcome {
  return { content: `Error: ${message}` };
}

/** A tool result saying the call was not allowed to run (plan mode), so nothing was tried. */
export function toolDenied(message: string): ToolOutcome {
  return { content: `${DENIED_PREFIX}${message}` };
}

/** Declares a function tool with a JSON-schema object of parameters. */
export function functionTool(
  name: string,
  description: string,
  properties: Record<string, unknown>,
  required: string[] = [],
): ChatCompletionFunctionTool {
  return {
    type: 'function',
    function: {
      name,
      description,
      parameters: { type: 'object', properties, required, additionalProperties: false },
    },
  };
}
