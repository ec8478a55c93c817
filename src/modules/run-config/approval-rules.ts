import { isAbsolute, posix } from 'node:path';

/**
 * Approval policies: rules that say which tool calls of a run need a person's yes (`ask`) or
 * are refused (`deny`); every call no rule matches is allowed. Environments and agent identities
 * carry them, and a run's own `config.approvals` adds to them: rules only ever add, so a run can
 * make the policy stricter but never looser.
 */
export const APPROVAL_EFFECTS = ['ask', 'deny'] as const;
export type ApprovalEffect = (typeof APPROVAL_EFFECTS)[number];

export type ApprovalRule =
  /** A regular expression over the command line of `run_command`. */
  | { command: string; effect: ApprovalEffect }
  /** An MCP tool by name (`deploy`, any server) or by server and name (`github/create_pr`). */
  | { mcp_tool: string; effect: ApprovalEffect }
  /** File writes (write_file, edit_file) to a path not under one of these sandbox paths. */
  | { write_outside: string[]; effect: ApprovalEffect }
  /** Egress to a host outside the environment's allowlist (`ask` instead of the proxy's deny). */
  | { egress: 'unlisted'; effect: ApprovalEffect };

export const MAX_APPROVAL_RULES = 50;
const MAX_PATTERN_LENGTH = 500;
const MAX_PATHS = 20;
const MATCHERS = ['command', 'mcp_tool', 'write_outside', 'egress'] as const;

/** A rule that cannot be accepted; the message names the field (`approvals.1.command: …`). */
export class ApprovalRuleError extends Error {}

/** Checks and normalises a list of approval rules; throws ApprovalRuleError naming the field. */
export function parseApprovalRules(input: unknown, field = 'approvals'): ApprovalRule[] {
  if (!Array.isArray(input)) throw new ApprovalRuleError(`${field}: must be an array of rules`);
  if (input.length > MAX_APPROVAL_RULES) {
    throw new ApprovalRuleError(`${field}: at most ${MAX_APPROVAL_RULES} rules are allowed`);
  }
  return input.map((rule, index) => parseRule(rule, `${field}.${index}`));
}

function parseRule(input: unknown, field: string): ApprovalRule {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ApprovalRuleError(
      `${field}: must be an object with one of ${MATCHERS.join(', ')} and an effect`,
    );
  }
  const rule = input as Record<string, unknown>;
  const unknownKey = Object.keys(rule).find(
    (key) => key !== 'effect' && !(MATCHERS as readonly string[]).includes(key),
  );
  if (unknownKey) {
    throw new ApprovalRuleError(
      `${field}.${unknownKey}: is not a rule field (use one of ${MATCHERS.join(', ')} and effect)`,
    );
  }
  const matchers = MATCHERS.filter((key) => rule[key] !== undefined);
  if (matchers.length !== 1) {
    throw new ApprovalRuleError(
      `${field}: must have exactly one of ${MATCHERS.join(', ')} (has ${matchers.length || 'none'})`,
    );
  }
  const effect = rule.effect;
  if (!(APPROVAL_EFFECTS as readonly unknown[]).includes(effect)) {
    throw new ApprovalRuleError(`${field}.effect: must be one of ${APPROVAL_EFFECTS.join(', ')}`);
  }
  const checkedEffect = effect as ApprovalEffect;
  switch (matchers[0]) {
    case 'command':
      return { command: parsePattern(rule.command, `${field}.command`), effect: checkedEffect };
    case 'mcp_tool':
      return { mcp_tool: parseToolName(rule.mcp_tool, `${field}.mcp_tool`), effect: checkedEffect };
    case 'write_outside':
      return {
        write_outside: parsePaths(rule.write_outside, `${field}.write_outside`),
        effect: checkedEffect,
      };
    case 'egress':
      if (rule.egress !== 'unlisted') {
        throw new ApprovalRuleError(`${field}.egress: must be "unlisted"`);
      }
      return { egress: 'unlisted', effect: checkedEffect };
  }
}

function parsePattern(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new ApprovalRuleError(`${field}: must be a non-empty regular expression`);
  }
  if (value.length > MAX_PATTERN_LENGTH) {
    throw new ApprovalRuleError(`${field}: must be at most ${MAX_PATTERN_LENGTH} characters`);
  }
  try {
    new RegExp(value);
  } catch (err) {
    throw new ApprovalRuleError(
      `${field}: is not a valid regular expression (${(err as Error).message})`,
    );
  }
  return value;
}

const TOOL_NAME = /^(?:[A-Za-z0-9_.-]{1,64}\/)?[A-Za-z0-9_.-]{1,128}$/;

function parseToolName(value: unknown, field: string): string {
  if (typeof value !== 'string' || !TOOL_NAME.test(value)) {
    throw new ApprovalRuleError(
      `${field}: must be a tool name ("deploy") or a server and a tool name ("github/create_pr")`,
    );
  }
  return value;
}

function parsePaths(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_PATHS) {
    throw new ApprovalRuleError(`${field}: must be a list of 1 to ${MAX_PATHS} absolute paths`);
  }
  return value.map((path, index) => {
    if (typeof path !== 'string' || !isAbsolute(path) || path.includes('\0')) {
      throw new ApprovalRuleError(`${field}.${index}: must be an absolute path in the sandbox`);
    }
    const normal = posix.normalize(path);
    return normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal;
  });
}

/**
 * The rules of every source together: rules only add (a `deny` and an `ask` for the same call
 * end as `deny`), so combining can only make the policy stricter. Duplicates are dropped.
 */
export function combineApprovalRules(
  ...lists: (ApprovalRule[] | null | undefined)[]
): ApprovalRule[] {
  const seen = new Set<string>();
  const combined: ApprovalRule[] = [];
  for (const rule of lists.flatMap((list) => list ?? [])) {
    const key = JSON.stringify(rule);
    if (seen.has(key)) continue;
    seen.add(key);
    combined.push(rule);
  }
  return combined;
}

/** A rule as people read it, for status messages, timelines and the inbox. */
export function describeApprovalRule(rule: ApprovalRule): string {
  if ('command' in rule) return `commands matching /${rule.command}/ (${rule.effect})`;
  if ('mcp_tool' in rule) return `MCP tool ${rule.mcp_tool} (${rule.effect})`;
  if ('write_outside' in rule) {
    return `writes outside ${rule.write_outside.join(', ')} (${rule.effect})`;
  }
  return `egress to hosts outside the allowlist (${rule.effect})`;
}
