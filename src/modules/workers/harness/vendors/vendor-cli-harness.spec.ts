import type { ApprovalRule } from '../../../run-config';
import type { ApprovalGate, HarnessContext } from '../harness.types';
import { ClaudeHarness } from './claude-harness';
import { vendorPrompt } from './vendor-cli-harness';

const context = (over: Partial<HarnessContext>): HarnessContext =>
  ({ config: {}, mode: 'normal', history: [], userMessages: [], ...over }) as HarnessContext;

describe('vendorPrompt', () => {
  it('is the prompt alone for a first execution', () => {
    expect(vendorPrompt(context({ userMessages: ['Fix the bug'] }))).toBe('Fix the bug');
  });

  it('leads with plan mode and base_prompt, and replays the conversation on a follow-up', () => {
    const prompt = vendorPrompt(
      context({
        mode: 'plan',
        config: { base_prompt: 'Be brief.' },
        history: [
          { role: 'user', content: 'Fix the bug' },
          { role: 'assistant', content: null, tool_calls: [] },
          { role: 'tool', tool_call_id: 'x', content: 'output' },
          { role: 'assistant', content: 'Fixed it.' },
        ],
        userMessages: ['Now add a test'],
      }),
    );
    const parts = prompt.split('\n\n---\n\n');
    expect(parts[0]).toContain('You are in plan mode');
    expect(parts.slice(1)).toEqual([
      'Be brief.',
      'Conversation so far:\n\nUser: Fix the bug\n\nAssistant: Fixed it.',
      'New message from the user:\n\nNow add a test',
    ]);
  });
});

describe('a vendor CLI harness with approval rules', () => {
  const gate = (rules: ApprovalRule[]): ApprovalGate => ({
    rules,
    untaken: async () => [],
    take: async () => false,
  });

  it('refuses to run a CLI whose tool calls the rules would have to see, naming the rules', async () => {
    const harness = new ClaudeHarness({
      vendorClis: { claudeBin: '/nonexistent/claude' } as never,
    });
    const teamSecret = jest.fn(async () => 'key');
    const result = await harness.run(
      context({
        approvals: gate([
          { command: '^git push', effect: 'ask' },
          { egress: 'unlisted', effect: 'ask' },
        ]),
        teamSecret,
      }),
    );
    expect(result).toEqual({
      outcome: 'failed',
      errorCode: 'operation_not_supported',
      summary:
        "the claude harness cannot apply approval rules to Claude Code's own tool calls " +
        '(commands matching /^git push/ (ask)); run with the built-in oz harness, or without ' +
        'command, write_outside and mcp_tool rules',
      usage: { promptTokens: 0, completionTokens: 0, modelCalls: 0 },
    });
    expect(teamSecret).not.toHaveBeenCalled();
  });

  it('leaves egress rules to the proxy: they do not stop the CLI from starting', async () => {
    const harness = new ClaudeHarness({
      vendorClis: { claudeBin: '/nonexistent/claude' } as never,
    });
    const result = await harness.run(
      context({ approvals: gate([{ egress: 'unlisted', effect: 'ask' }]) }),
    );
    // It went on to look for its credentials (none are configured here).
    expect(result).toMatchObject({ outcome: 'failed', errorCode: 'integration_not_configured' });
  });
});
