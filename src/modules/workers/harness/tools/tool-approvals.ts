import { posix } from 'node:path';
import {
  describeApprovalRule,
  evaluateApproval,
  type ApprovalRule,
  type ApprovalSubject,
} from '../../../run-config';
import { hostPort } from '../../sandbox/egress-proxy/egress-decisions';
import type { ApprovalRequestDraft, EgressTarget } from '../harness.types';
import { functionTool, toolDenied, toolError, type ToolOutcome } from './tool.types';

/** The longest argument text a request's summary quotes. */
const MAX_QUOTED = 300;

export const ASK_USER_TOOL = functionTool(
  'ask_user',
  'Ask the user a question and wait for the answer, which comes back as this tool result. The ' +
    'run pauses until someone answers (it may take hours), so ask only what you cannot decide ' +
    'yourself, and ask everything you need in one question.',
  { question: { type: 'string', description: 'The question, complete and self-contained.' } },
  ['question'],
);

/** What the rules say about one tool call before it runs. */
export type ToolVerdict =
  | { effect: 'allow' }
  | { effect: 'deny'; outcome: ToolOutcome }
  | { effect: 'ask'; pending: ApprovalRequestDraft };

export interface ToolCallFacts {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/**
 * What a built-in tool call does, in the terms approval rules speak: run_command's command line,
 * the absolute sandbox path write_file and edit_file write (relative paths are the workspace's),
 * an MCP tool's server and own name. Null for calls no rule speaks of (reads, searches, finish)
 * and for arguments the tool itself will refuse.
 */
export function approvalSubject(
  call: Pick<ToolCallFacts, 'name' | 'args'>,
  where: {
    workdir: string;
    /** Plan mode refuses writes before any rule could ask about them. */
    writesAllowed: boolean;
    mcpOrigin(name: string): { server: string; tool: string } | undefined;
  },
): ApprovalSubject | null {
  const { name, args } = call;
  if (name === 'run_command') {
    return typeof args.command === 'string' ? { kind: 'command', commandLine: args.command } : null;
  }
  if (name === 'write_file' || name === 'edit_file') {
    if (!where.writesAllowed || typeof args.path !== 'string' || args.path === '') return null;
    return { kind: 'write', path: posix.resolve(where.workdir, args.path) };
  }
  const origin = where.mcpOrigin(name);
  return origin ? { kind: 'mcp_tool', ...origin } : null;
}

/** The strictest rule's verdict on a call; `deny` comes back as the denied tool result. */
export function toolVerdict(
  rules: readonly ApprovalRule[],
  call: ToolCallFacts,
  subject: ApprovalSubject | null,
): ToolVerdict {
  if (!subject) return { effect: 'allow' };
  const verdict = evaluateApproval(rules, subject);
  if (verdict.effect === 'allow') return verdict;
  const summary = describeCall(call.name, subject, call.args);
  if (verdict.effect === 'deny') {
    return {
      effect: 'deny',
      outcome: toolDenied(
        `${summary} is refused by the approval rule on ${describeApprovalRule(verdict.rule)}; ` +
          'it was not run.',
      ),
    };
  }
  return {
    effect: 'ask',
    pending: {
      kind: 'approval',
      tool: call.name,
      toolCallId: call.id,
      arguments: call.args,
      rule: verdict.rule,
      summary,
    },
  };
}

/** An ask_user call: the question to wait on, or the error for arguments without one. */
export function questionFor(call: ToolCallFacts): ApprovalRequestDraft | ToolOutcome {
  const { question } = call.args;
  if (typeof question !== 'string' || question.trim() === '') {
    return toolError('ask_user needs a non-empty "question" string.');
  }
  return {
    kind: 'question',
    tool: call.name,
    toolCallId: call.id,
    arguments: { question },
    rule: null,
    summary: question.trim(),
  };
}

/** A host outside the allowlist that the proxy refused, under a rule that asks about it. */
export function egressRequest(target: EgressTarget, rule: ApprovalRule): ApprovalRequestDraft {
  return {
    kind: 'approval',
    tool: 'egress',
    toolCallId: null,
    arguments: { host: target.host, port: target.port },
    rule,
    summary: `egress to ${hostPort(target.host, target.port)} (not in the environment's allowlist)`,
  };
}

/** The call as the request's summary and the run's status message name it. */
function describeCall(
  name: string,
  subject: ApprovalSubject,
  args: Record<string, unknown>,
): string {
  switch (subject.kind) {
    case 'command':
      return `run_command: ${quoted(subject.commandLine)}`;
    case 'write':
      return `${name} ${subject.path}`;
    case 'mcp_tool':
      return `MCP tool ${subject.server}/${subject.tool} ${quoted(JSON.stringify(args))}`;
    case 'egress':
      return `egress to ${hostPort(subject.host, subject.port)}`;
  }
}

function quoted(text: string): string {
  return text.length <= MAX_QUOTED ? text : `${text.slice(0, MAX_QUOTED)}…`;
}
