import { secretRefusal, SecretScope } from './secret-scope';

const run = { environmentId: 'envA', executorId: 'agent1', scheduleId: null };
const scoped = (scope: Partial<SecretScope>) => ({
  name: 'TOKEN',
  purpose: null,
  scope: { environments: [], agent_identities: [], schedules: [], ...scope },
});

describe('secretRefusal', () => {
  it('lets every run have an unscoped run secret', () => {
    expect(secretRefusal({ name: 'TOKEN', scope: null, purpose: null }, run)).toBeNull();
  });

  it('lets a run have a scoped secret when its environment, agent or schedule is listed', () => {
    expect(secretRefusal(scoped({ environments: ['envA'] }), run)).toBeNull();
    expect(secretRefusal(scoped({ agent_identities: ['agent1'] }), run)).toBeNull();
    expect(secretRefusal(scoped({ schedules: ['s1'] }), { ...run, scheduleId: 's1' })).toBeNull();
  });

  it('refuses a scoped secret to a run outside every list, naming the scope', () => {
    expect(secretRefusal(scoped({ environments: ['envB'], schedules: ['s1'] }), run)).toBe(
      'secret "TOKEN" is limited to environments envB; schedules s1, and this run is none of them',
    );
    expect(secretRefusal(scoped({}), run)).toBe(
      'secret "TOKEN" is limited to no run, and this run is none of them',
    );
    // A run with no schedule is not "in" a scope listing no schedule either.
    expect(
      secretRefusal(scoped({ schedules: ['s1'] }), { ...run, scheduleId: null }),
    ).not.toBeNull();
  });

  it("refuses a webhook's signing secret to every run, scoped or not", () => {
    const webhook = { name: 'WEBHOOK_X_SECRET', scope: null, purpose: 'webhook' as const };
    expect(secretRefusal(webhook, run)).toBe(
      `secret "WEBHOOK_X_SECRET" is a webhook's signing secret; runs never get it`,
    );
  });
});
