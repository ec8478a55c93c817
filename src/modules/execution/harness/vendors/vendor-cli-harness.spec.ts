import type { HarnessContext } from '../harness.types';
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
