import type { EgressDecision } from '../../../../common/egress/egress-policy';
import { EgressRecorder, egressSummaryCounts } from './egress-recorder';

describe('EgressRecorder', () => {
  const decision = (over: Partial<EgressDecision>): EgressDecision => ({
    host: 'api.example.com',
    port: 443,
    method: null,
    allowed: true,
    reason: 'api.example.com',
    ...over,
  });

  function recorder() {
    const events: { type: string; payload: Record<string, unknown> }[] = [];
    const counted: string[] = [];
    const egress = new EgressRecorder(
      async (type, payload) => {
        events.push({ type, payload });
      },
      (d) => counted.push(d),
    );
    return { egress, events, counted };
  }

  it('puts the first refusal of a host on the timeline at once and folds its repeats into the summary', async () => {
    const { egress, events, counted } = recorder();
    const refused = decision({ host: 'evil.test', allowed: false, reason: 'not listed' });
    egress.record(refused);
    egress.record(refused);
    egress.record(
      decision({ host: 'evil.test', method: 'POST', allowed: false, reason: 'GET only' }),
    );
    egress.record(decision({}));
    egress.record(decision({}));
    expect(events).toEqual([
      {
        type: 'egress_denied',
        payload: { host: 'evil.test', port: 443, method: null, reason: 'not listed', count: 1 },
      },
      {
        type: 'egress_denied',
        payload: { host: 'evil.test', port: 443, method: 'POST', reason: 'GET only', count: 1 },
      },
    ]);
    expect(counted).toEqual(['denied', 'denied', 'denied', 'allowed', 'allowed']);
    await egress.finish();
    expect(events[2]).toEqual({
      type: 'egress_summary',
      payload: {
        allowed: [{ host: 'api.example.com', port: 443, count: 2 }],
        denied: [
          { host: 'evil.test', port: 443, method: null, reason: 'not listed', count: 2 },
          { host: 'evil.test', port: 443, method: 'POST', reason: 'GET only', count: 1 },
        ],
      },
    });
  });

  it('says nothing at the end when its proxy decided nothing', async () => {
    const { egress, events } = recorder();
    await egress.finish();
    expect(events).toEqual([]);
  });

  it("counts a summary's decisions, ignoring what is not a count", () => {
    expect(
      egressSummaryCounts({
        allowed: [{ count: 3 }, { count: 2 }],
        denied: [{ count: 1 }, { count: -4 }, { count: 'x' }, null],
      }),
    ).toEqual([
      ['allowed', 5],
      ['denied', 1],
    ]);
    expect(egressSummaryCounts(undefined)).toEqual([
      ['allowed', 0],
      ['denied', 0],
    ]);
  });
});
