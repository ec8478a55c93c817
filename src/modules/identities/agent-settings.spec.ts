import { AgentIdentity } from './agent-identity.entity';
import { toAgentResponse } from './agent-response.mapper';
import { applySettings, duplicateSecretNames } from './agent-settings';

describe('agent settings', () => {
  it('creates from a body, dropping empty values', () => {
    expect(
      applySettings(
        {},
        { description: 'd', prompt: '', skills: [], secrets: [{ name: 'A' }], harness: {} },
      ),
    ).toEqual({ description: 'd', secrets: [{ name: 'A' }] });
  });

  it('updates with the Oz rules: omitted or null keeps, empty clears, a value replaces', () => {
    const current = {
      description: 'old',
      prompt: 'p',
      skills: ['a:b'],
      secrets: [{ name: 'A' }],
      worker_host: 'box',
    };
    expect(
      applySettings(current, {
        description: null,
        prompt: '',
        skills: [],
        secrets: [{ name: 'B' }],
        base_model: 'm',
      }),
    ).toEqual({
      description: 'old',
      secrets: [{ name: 'B' }],
      worker_host: 'box',
      base_model: 'm',
    });
  });

  it('merges memory field by field, auto memory on by default', () => {
    const stores = [{ uid: 'm', access: 'read_only', instructions: 'i' }];
    const created = applySettings({}, { memory: { attached_stores: stores } });
    expect(created.memory).toEqual({ attached_stores: stores, auto_memory: { enabled: true } });
    const updated = applySettings(created, { memory: { auto_memory: { enabled: false } } });
    expect(updated.memory).toEqual({ attached_stores: stores, auto_memory: { enabled: false } });
    expect(applySettings(updated, { memory: { attached_stores: [] } }).memory).toEqual({
      attached_stores: [],
      auto_memory: { enabled: false },
    });
  });

  it('finds duplicate secret names', () => {
    expect(duplicateSecretNames([{ name: 'A' }, { name: 'B' }, { name: 'A' }])).toEqual(['A']);
    expect(duplicateSecretNames([{ name: 'A' }])).toEqual([]);
  });

  it('answers every field the SDKs require, with defaults for unset ones', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const identity: AgentIdentity = {
      uid: 'u'.repeat(22),
      teamId: 't'.repeat(22),
      name: 'Bot',
      factoryUid: null,
      settings: { base_model: 'm' },
      createdBy: null,
      createdAt: at,
      updatedAt: at,
      deletedAt: null,
    };
    expect(toAgentResponse(identity, false)).toEqual({
      uid: identity.uid,
      name: 'Bot',
      description: null,
      available: false,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      default_runner_uid: '',
      memory: { attached_stores: [], auto_memory: { enabled: true } },
      secrets: [],
      skills: [],
      prompt: null,
      factory_uid: null,
      on_behalf_of_enabled: false,
      base_model: 'm',
    });
  });
});
