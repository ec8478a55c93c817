import { runPageUrl, sessionIdOf, triggerUrlOf } from './run-links';

describe('run links', () => {
  const base = 'https://ambient.example.com/';
  const run = { source: 'API', scheduleId: null, parentRunId: null, metadata: null };

  it("points at the console's run page", () => {
    expect(runPageUrl(base, 'r-1')).toBe('https://ambient.example.com/console/runs/r-1');
    expect(runPageUrl(base, 'a b')).toBe('https://ambient.example.com/console/runs/a%20b');
  });

  it('has a session once an execution started', () => {
    expect(sessionIdOf({ id: 'r-1', executionCount: 0 })).toBeUndefined();
    expect(sessionIdOf({ id: 'r-1', executionCount: 2 })).toBe('r-1');
  });

  it('links the trigger of scheduled, webhook and child runs, nothing for direct ones', () => {
    expect(triggerUrlOf(base, run)).toBeUndefined();
    expect(triggerUrlOf(base, { ...run, source: 'SCHEDULED_AGENT', scheduleId: 's-1' })).toBe(
      'https://ambient.example.com/api/v1/agent/schedules/s-1',
    );
    expect(
      triggerUrlOf(base, {
        ...run,
        source: 'CUSTOM_WEBHOOK',
        metadata: { factory_uid: 'F', webhook_uid: 'W', delivery_id: 'd' },
      }),
    ).toBe('https://ambient.example.com/api/v1/factory/F/webhooks/W');
    expect(triggerUrlOf(base, { ...run, source: 'CUSTOM_WEBHOOK', metadata: {} })).toBeUndefined();
    expect(triggerUrlOf(base, { ...run, source: 'ORCHESTRATION', parentRunId: 'p-1' })).toBe(
      'https://ambient.example.com/api/v1/agent/runs/p-1',
    );
  });
});
