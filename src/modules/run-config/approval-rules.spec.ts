import { evaluateApproval } from './approval-policy';
import {
  ApprovalRuleError,
  combineApprovalRules,
  parseApprovalRules,
  type ApprovalRule,
} from './approval-rules';

describe('parseApprovalRules', () => {
  it('accepts the four kinds of rule and normalises paths', () => {
    expect(
      parseApprovalRules([
        { command: '^git push', effect: 'ask' },
        { mcp_tool: 'deploy', effect: 'deny' },
        { write_outside: ['/workspace/app/'], effect: 'ask' },
        { egress: 'unlisted', effect: 'ask' },
      ]),
    ).toEqual([
      { command: '^git push', effect: 'ask' },
      { mcp_tool: 'deploy', effect: 'deny' },
      { write_outside: ['/workspace/app'], effect: 'ask' },
      { egress: 'unlisted', effect: 'ask' },
    ]);
  });

  it.each<[unknown, string]>([
    [{ rules: [] }, 'approvals: must be an array'],
    [[{ command: '(', effect: 'ask' }], 'approvals.0.command: is not a valid regular expression'],
    [[{ command: 'x', effect: 'allow' }], 'approvals.0.effect: must be one of ask, deny'],
    [[{ command: 'x', mcp_tool: 'y', effect: 'ask' }], 'approvals.0: must have exactly one of'],
    [[{ effect: 'ask' }], 'approvals.0: must have exactly one of'],
    [[{ command: 'x', effect: 'ask', when: 1 }], 'approvals.0.when: is not a rule field'],
    [
      [{ write_outside: ['relative'], effect: 'ask' }],
      'approvals.0.write_outside.0: must be an absolute path',
    ],
    [[{ egress: 'all', effect: 'ask' }], 'approvals.0.egress: must be "unlisted"'],
    [[{ mcp_tool: 'a b', effect: 'ask' }], 'approvals.0.mcp_tool: must be a tool name'],
  ])('refuses %j naming the field', (input, message) => {
    expect(() => parseApprovalRules(input)).toThrow(ApprovalRuleError);
    expect(() => parseApprovalRules(input)).toThrow(message);
  });
});

describe('evaluateApproval', () => {
  const rules: ApprovalRule[] = [
    { command: '^git push', effect: 'ask' },
    { command: 'force', effect: 'deny' },
    { mcp_tool: 'deploy', effect: 'deny' },
    { mcp_tool: 'github/create_pr', effect: 'ask' },
    { write_outside: ['/workspace/app'], effect: 'ask' },
  ];

  it('allows what no rule matches', () => {
    expect(evaluateApproval(rules, { kind: 'command', commandLine: 'ls -la' })).toEqual({
      effect: 'allow',
    });
    expect(evaluateApproval(rules, { kind: 'write', path: '/workspace/app/src/a.ts' }).effect).toBe(
      'allow',
    );
    expect(
      evaluateApproval(rules, { kind: 'mcp_tool', server: 'other', tool: 'create_pr' }).effect,
    ).toBe('allow');
    expect(evaluateApproval(rules, { kind: 'egress', host: 'a.example', port: 443 }).effect).toBe(
      'allow',
    );
  });

  it('asks, and lets a deny win over an ask', () => {
    expect(evaluateApproval(rules, { kind: 'command', commandLine: 'git push origin' })).toEqual({
      effect: 'ask',
      rule: rules[0],
    });
    expect(evaluateApproval(rules, { kind: 'command', commandLine: 'git push --force' })).toEqual({
      effect: 'deny',
      rule: rules[1],
    });
    expect(
      evaluateApproval(rules, { kind: 'mcp_tool', server: 'ops', tool: 'deploy' }).effect,
    ).toBe('deny');
    expect(
      evaluateApproval(rules, { kind: 'mcp_tool', server: 'github', tool: 'create_pr' }).effect,
    ).toBe('ask');
    expect(evaluateApproval(rules, { kind: 'write', path: '/workspace/app/../etc/x' }).effect).toBe(
      'ask',
    );
    expect(evaluateApproval(rules, { kind: 'write', path: '/workspace/application' }).effect).toBe(
      'ask',
    );
  });

  it('treats a pattern that backtracks too long as a match (fails closed)', () => {
    const slow: ApprovalRule[] = [{ command: '^(a+)+$', effect: 'ask' }];
    expect(
      evaluateApproval(slow, { kind: 'command', commandLine: `${'a'.repeat(40)}!` }).effect,
    ).toBe('ask');
  });

  it('combines sources so that a run can only add rules', () => {
    const environment: ApprovalRule[] = [{ command: '^git push', effect: 'ask' }];
    const run: ApprovalRule[] = [
      { command: '^git push', effect: 'ask' },
      { command: '^git push', effect: 'deny' },
    ];
    const combined = combineApprovalRules(environment, undefined, run);
    expect(combined).toHaveLength(2);
    expect(evaluateApproval(combined, { kind: 'command', commandLine: 'git push' }).effect).toBe(
      'deny',
    );
  });
});
