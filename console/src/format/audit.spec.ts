import type { components } from '../api/schema';
import {
  auditActionLabel,
  auditActor,
  auditTarget,
  detailKeyLabel,
  detailLines,
  detailValue,
} from './audit';

type AuditEvent = components['schemas']['AuditEvent'];

const event = (overrides: Partial<AuditEvent>): AuditEvent => ({
  id: 'e1',
  occurred_at: '2026-03-01T12:00:00Z',
  actor: { type: 'api_key', id: 'k1', name: 'ci', role: 'admin', on_behalf_of: null },
  action: 'run.create',
  target: { type: 'run', id: 'r1' },
  outcome: 'success',
  details: {},
  ip: null,
  request_id: null,
  ...overrides,
});

describe('console audit labels', () => {
  it('names actions in words', () => {
    expect(auditActionLabel('run.create')).toBe('Run created');
    expect(auditActionLabel('schedule.pause')).toBe('Schedule paused');
    expect(auditActionLabel('agent.delete')).toBe('Identity deleted');
    expect(auditActionLabel('api_key.revoke')).toBe('API key revoked');
    expect(auditActionLabel('webhook.rotate_secret')).toBe('Webhook secret rotated');
    expect(auditActionLabel('environment.accept_share_link')).toBe('Share link accepted');
    expect(auditActionLabel('limits.update')).toBe('Limits changed');
    // A refused permission is the action of a denied event.
    expect(auditActionLabel('secrets.write')).toBe('Change secrets');
    expect(auditActionLabel('runs.create')).toBe('Start runs');
    expect(auditActionLabel('api_keys.read')).toBe('Read API keys');
    // Newer than this console: still words.
    expect(auditActionLabel('gadget.frobnicate_all')).toBe('Gadget: frobnicate all');
  });

  it('links targets to their console page, by name when the event has one', () => {
    expect(auditTarget(event({ details: { title: 'Release notes' } }))).toEqual({
      text: 'Run “Release notes”',
      id: 'r1',
      to: '/runs/r1',
    });
    expect(
      auditTarget(event({ action: 'schedule.pause', target: { type: 'schedule', id: 's 1' } })),
    ).toEqual({ text: 'Schedule s 1', to: '/schedules?schedule=s%201' });
    const hook = event({
      action: 'webhook.rotate_secret',
      target: { type: 'webhook', id: 'w1' },
      details: { factory_id: 'f1' },
    });
    expect(auditTarget(hook)?.to).toBe('/webhooks?factory=f1&webhook=w1');
    const identityKey = event({
      action: 'api_key.create',
      target: { type: 'api_key', id: 'k2' },
      details: { name: 'deploy', agent_uid: 'a1' },
    });
    expect(auditTarget(identityKey)?.to).toBe('/identities?identity=a1');
    expect(
      auditTarget(event({ action: 'limits.update', target: { type: 'team', id: 't' } })),
    ).toEqual({ text: "The team's limits", id: 't', to: '/usage' });
    expect(
      auditTarget(event({ action: 'secret.update', target: { type: 'secret', id: 'TOKEN' } })),
    ).toEqual({ text: 'Secret TOKEN', to: undefined });
    // Deleted: no page to go to.
    const deleted = event({
      action: 'environment.delete',
      target: { type: 'environment', id: 'e' },
    });
    expect(auditTarget(deleted)).toEqual({ text: 'Environment e' });
    expect(auditTarget(event({ target: null }))).toBeNull();
  });

  it("links actors that have a page: a run, an agent's key to its identity, the schedule that fired", () => {
    expect(
      auditActor({ type: 'run', id: 'r9', name: null, role: null, on_behalf_of: null }),
    ).toEqual({
      text: 'r9',
      to: '/runs/r9',
    });
    expect(
      auditActor({
        type: 'system',
        id: 'schedule:s1',
        name: 'schedule "nightly"',
        role: null,
        on_behalf_of: null,
      }),
    ).toEqual({ text: 'schedule "nightly"', to: '/schedules?schedule=s1' });
    expect(
      auditActor({
        type: 'api_key',
        id: 'k7',
        name: 'nightly-triage',
        role: 'member',
        on_behalf_of: { type: 'agent', id: 'a3', name: 'Triage bot' },
      }),
    ).toEqual({ text: 'nightly-triage', to: '/identities?identity=a3' });
    const ada = { type: 'user', id: 'u1', name: 'Ada', role: 'admin', on_behalf_of: null } as const;
    expect(auditActor(ada)).toEqual({
      text: 'Ada',
    });
  });

  it('reads details as key and value lines, a change as before → after', () => {
    expect(detailKeyLabel('max_run_cost_usd')).toBe('Max run cost (USD)');
    expect(detailKeyLabel('secret_name')).toBe('Secret name');
    expect(detailKeyLabel('request_id')).toBe('Request ID');
    expect(detailValue('value_changed', true)).toBe('yes');
    expect(detailValue('hosts', ['a.example', 'b.example'])).toBe('a.example, b.example');
    expect(
      detailLines({ title: 'Notes', source: 'SCHEDULED_AGENT', parent_run_id: 'p1', extra: null }),
    ).toEqual([
      { key: 'Title', value: 'Notes', to: undefined },
      { key: 'Source', value: 'Schedule', to: undefined },
      { key: 'Parent run', value: 'p1', to: '/runs/p1' },
      { key: 'Extra', value: 'none', to: undefined },
    ]);
    expect(
      detailLines({
        before: { max_concurrent_runs: null, monthly_budget_usd: null },
        after: { max_concurrent_runs: 2, monthly_budget_usd: 250 },
      }),
    ).toEqual([
      { key: 'Max concurrent runs', value: 'none → 2' },
      { key: 'Monthly budget (USD)', value: 'none → $250.00' },
    ]);
    expect(detailLines({})).toEqual([]);
  });
});
