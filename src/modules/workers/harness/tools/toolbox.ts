import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { REPORT_ARTIFACT_TOOL, runReportArtifactTool } from '../../../artifacts';
import type { ApprovalSubject } from '../../../run-config';
import type { McpToolset } from '../mcp/mcp-toolset';
import { SandboxLostError } from '../../sandbox/sandbox.types';
import { finishTool, runCommandTool } from './command-tools';
import { editFileTool, readFileTool, ToolArgumentError, writeFileTool } from './file-tools';
import { SandboxFileError } from './sandbox-file-io';
import { listFilesTool, searchFilesTool } from './search-tools';
import { approvalSubject, ASK_USER_TOOL } from './tool-approvals';
import {
  toolDenied,
  toolError,
  type AgentTool,
  type ToolOutcome,
  type ToolScope,
} from './tool.types';
import { WorkspacePathError } from './workspace-paths';

export const BUILT_IN_TOOLS: AgentTool[] = [
  runCommandTool,
  readFileTool,
  writeFileTool,
  editFileTool,
  listFilesTool,
  searchFilesTool,
  finishTool,
];

export type ReportArtifact = (report: Record<string, unknown>) => Promise<{ artifactUid: string }>;

/** The tools of one execution: the built-in ones, report_artifact when possible, and MCP tools. */
export class Toolbox {
  private readonly builtIn = new Map<string, AgentTool>();

  constructor(
    private readonly scope: ToolScope,
    private readonly mcp: McpToolset,
    private readonly reportArtifact?: ReportArtifact,
    /** Offers ask_user (the harness answers it: the run waits for a person). */
    private readonly canAsk = false,
  ) {
    for (const tool of BUILT_IN_TOOLS) this.builtIn.set(tool.definition.function.name, tool);
  }

  definitions(): ChatCompletionFunctionTool[] {
    const own = BUILT_IN_TOOLS.map((tool) => tool.definition);
    if (this.reportArtifact) own.push(REPORT_ARTIFACT_TOOL);
    if (this.canAsk) own.push(ASK_USER_TOOL);
    return [...own, ...this.mcp.definitions()];
  }

  /** What a call does in the terms of approval rules (see `approvalSubject`). */
  approvalSubject(name: string, args: Record<string, unknown>): ApprovalSubject | null {
    return approvalSubject(
      { name, args },
      {
        workdir: this.scope.sandbox.workdir,
        writesAllowed: this.scope.mode !== 'plan',
        mcpOrigin: (tool) => this.mcp.origin(tool),
      },
    );
  }

  /** Runs a call whose arguments are a JSON object; every failure becomes a tool result. */
  async run(name: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    if (name === 'report_artifact' && this.reportArtifact) {
      return {
        content: await runReportArtifactTool(args, this.scope.workspaceDir, this.reportArtifact),
      };
    }
    if (this.mcp.has(name)) {
      const timeoutMs = this.scope.commandTimeoutSeconds * 1000;
      return { content: await this.mcp.call(name, args, { timeoutMs, signal: this.scope.signal }) };
    }
    const tool = this.builtIn.get(name);
    if (!tool) {
      const known = this.definitions().map((definition) => definition.function.name);
      return toolError(`unknown tool "${name}". Available tools: ${known.join(', ')}.`);
    }
    if (tool.writes && this.scope.mode === 'plan') {
      return toolDenied(
        `${name} is not available in plan mode: investigate only and reply with the plan.`,
      );
    }
    try {
      return await tool.run(args, this.scope);
    } catch (err) {
      // Not the tool's failure: the execution ends (see SandboxLostError).
      if (err instanceof SandboxLostError) throw err;
      if (
        err instanceof ToolArgumentError ||
        err instanceof WorkspacePathError ||
        err instanceof SandboxFileError
      ) {
        return toolError(`${err.message}.`);
      }
      const code = (err as NodeJS.ErrnoException).code;
      if (typeof code === 'string') return toolError(`${name} failed: ${(err as Error).message}.`);
      throw err;
    }
  }
}
