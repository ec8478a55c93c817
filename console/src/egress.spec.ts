import type { components } from './api/schema';
import { blockedHostsOf, ruleErrorLine, ruleFor, rulesOf, rulesText } from './egress';

const event = (payload: Record<string, unknown>, type = 'egress_denied') =>
  ({
    event_type: type,
    event_uuid: String(Math.random()),
    occurred_at: '2026-01-01T00:00:00Z',
    run_id: 'r',
    payload,
  }) as unknown as components['schemas']['TimelineEvent'];

describe('console egress helpers', () => {
  it('folds the denied events of several executions and ignores other events', () => {
    const denied = {
      host: 'evil.example',
      port: 443,
      method: null,
      reason: 'not listed',
      count: 3,
    };
    expect(
      blockedHostsOf([
        event(denied),
        event({ ...denied, count: 2 }),
        event({ host: 'api.example.com', port: 8443, method: 'POST', reason: 'GET only' }),
        event({ allowed: [], denied: [] }, 'egress_summary'),
      ]),
    ).toEqual([
      { ...denied, count: 5 },
      { host: 'api.example.com', port: 8443, method: 'POST', reason: 'GET only', count: 1 },
    ]);
  });

  it('writes the rule for a host and port', () => {
    expect(ruleFor('api.example.com', 443)).toBe('api.example.com');
    expect(ruleFor('api.example.com', 80)).toBe('api.example.com');
    expect(ruleFor('api.example.com', 8443)).toBe('api.example.com:8443');
    expect(ruleFor('2001:db8::1', 8443)).toBe('[2001:db8::1]:8443');
  });

  it('turns lines into rules and back, and a 400 into the line it names', () => {
    const text = 'api.github.com\n\n  api.example.com GET HEAD\n*.npmjs.org:443';
    const { rules, lines } = rulesOf(text);
    expect(rules).toEqual([
      'api.github.com',
      { host: 'api.example.com', methods: ['GET', 'HEAD'] },
      '*.npmjs.org:443',
    ]);
    expect(lines).toEqual([1, 3, 4]);
    expect(rulesText(rules)).toBe('api.github.com\napi.example.com GET HEAD\n*.npmjs.org:443');
    expect(
      ruleErrorLine('400: egress_allow.1.methods.0: "X" is not an HTTP method', lines),
    ).toEqual({ line: 3, problem: '"X" is not an HTTP method' });
    expect(ruleErrorLine('400: egress_allow.2: "*.com" is too broad', lines)).toEqual({
      line: 4,
      problem: '"*.com" is too broad',
    });
    expect(ruleErrorLine('400: network: must be one of …', lines)).toBeNull();
  });
});
