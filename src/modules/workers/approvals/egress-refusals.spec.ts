import type { EgressDecision } from '../../../common/egress/egress-policy';
import { EgressRefusals } from './egress-refusals';

const decision = (host: string, fields: Partial<EgressDecision> = {}): EgressDecision => ({
  host,
  port: 443,
  method: null,
  allowed: false,
  reason: 'egress refused',
  unlisted: true,
  ...fields,
});

describe('EgressRefusals', () => {
  it('collects each refused unlisted host once until taken, leaving out denied hosts, allowed requests and other refusals', () => {
    const refusals = new EgressRefusals(new Set(['denied.test:443']));
    refusals.record(decision('a.test'));
    refusals.record(decision('a.test'));
    refusals.record(decision('denied.test'));
    refusals.record(decision('ok.test', { allowed: true, unlisted: undefined }));
    refusals.record(decision('method.test', { method: 'POST', unlisted: undefined }));
    refusals.record(decision('::1', { port: 8443 }));
    expect(refusals.take()).toEqual([
      { host: 'a.test', port: 443 },
      { host: '::1', port: 8443 },
    ]);
    refusals.record(decision('a.test'));
    expect(refusals.take()).toEqual([]);
  });
});
