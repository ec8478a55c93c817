import { posix } from 'node:path';
import { createContext, Script } from 'node:vm';
import type { ApprovalRule } from './approval-rules';

/** What a tool call does, in the terms approval rules speak. */
export type ApprovalSubject =
  | { kind: 'command'; commandLine: string }
  /** An absolute path inside the sandbox that a file tool writes. */
  | { kind: 'write'; path: string }
  | { kind: 'mcp_tool'; server: string; tool: string }
  /** A connection the egress proxy refused because no allowlist rule names the host. */
  | { kind: 'egress'; host: string; port: number };

export type ApprovalVerdict = { effect: 'allow' } | { effect: 'ask' | 'deny'; rule: ApprovalRule };

/**
 * A command pattern is the team's regular expression run on a model's command line: it gets a
 * bounded time before it counts as a match, so a pattern that backtracks for minutes cannot stall
 * the worker and fails closed (the call is asked about or denied, never silently allowed). The
 * bound is wall-clock time: a busy machine can hold the thread for longer than the first try's
 * budget, so a timed-out pattern gets a second, longer try before it counts as a match (an
 * ordinary pattern takes microseconds; one that backtracks without end times out again).
 */
const PATTERN_TIMEOUTS_MS = [50, 1000];

/** One context for every pattern: making a context per call costs more than the match. */
const patternContext = createContext({ pattern: '', line: '' }) as {
  pattern: string;
  line: string;
};
const patternTest = new Script('new RegExp(pattern).test(line)');

/** The strictest rule that matches: `deny` wins over `ask`, and no match is `allow`. */
export function evaluateApproval(
  rules: readonly ApprovalRule[],
  subject: ApprovalSubject,
): ApprovalVerdict {
  let asked: ApprovalRule | undefined;
  for (const rule of rules) {
    if (!matches(rule, subject)) continue;
    if (rule.effect === 'deny') return { effect: 'deny', rule };
    asked ??= rule;
  }
  return asked ? { effect: 'ask', rule: asked } : { effect: 'allow' };
}

function matches(rule: ApprovalRule, subject: ApprovalSubject): boolean {
  switch (subject.kind) {
    case 'command':
      return 'command' in rule && commandMatches(rule.command, subject.commandLine);
    case 'write':
      return (
        'write_outside' in rule && !rule.write_outside.some((root) => isUnder(subject.path, root))
      );
    case 'mcp_tool':
      return 'mcp_tool' in rule && toolMatches(rule.mcp_tool, subject.server, subject.tool);
    case 'egress':
      return 'egress' in rule;
  }
}

function commandMatches(pattern: string, commandLine: string): boolean {
  for (const timeout of PATTERN_TIMEOUTS_MS) {
    patternContext.pattern = pattern;
    patternContext.line = commandLine;
    try {
      return patternTest.runInContext(patternContext, { timeout }) as boolean;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') return true;
    }
  }
  return true;
}

function isUnder(path: string, root: string): boolean {
  const normal = posix.normalize(path);
  return root === '/' || normal === root || normal.startsWith(`${root}/`);
}

function toolMatches(name: string, server: string, tool: string): boolean {
  const slash = name.indexOf('/');
  return slash === -1 ? name === tool : name === `${server}/${tool}`;
}
