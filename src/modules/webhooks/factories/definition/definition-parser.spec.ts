import { BUILTIN_REGISTRY } from '../../verifiers/builtin-verifiers.fixture';
import { parseDefinition } from './definition-parser';
import type { DefinitionVocabulary } from './definition-vocabulary';

const vocabulary: DefinitionVocabulary = {
  harnessTypes: ['oz', 'claude', 'codex', 'gemini'],
  signatureSchemes: BUILTIN_REGISTRY.names(),
  credentialHeaders: BUILTIN_REGISTRY.credentialHeaders,
};

const UID = 'AbCdEfGhIjKlMnOpQrStUv';
const factoryYaml = 'schemaVersion: v1alpha1\nname: Ops\nagentDefaults:\n  model: fake-model\n';
const automation = (front: string, body = 'Triage the alert.') => `---\n${front}\n---\n${body}\n`;
const files = (extra: Record<string, string>) =>
  Object.entries({ 'factory.yaml': factoryYaml, ...extra }).map(([path, content]) => ({
    path,
    content,
  }));

describe('parseDefinition', () => {
  it('parses a complete definition', () => {
    const { definition, diagnostics } = parseDefinition(
      files({
        'webhooks/ci.yaml':
          'authMode: signature\nsignatureScheme: github\nsecretName: CI_SECRET\ndeliveryIdHeader: X-CI-Run-Id\n',
        'automations/triage/automation.md': automation(
          `enabled: true\nmodel: other-model\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [${UID}]\n      payload:\n        event: [deploy.finished]\n        env: {not_in: [dev]}`,
        ),
        'agents/lead/agent.md': automation('agentType: FOREMAN', 'You lead.'),
        'README.md': 'ignored in a repository',
      }),
      { strictPaths: false, vocabulary },
    );
    expect(diagnostics).toEqual([]);
    expect(definition!.factory).toMatchObject({
      name: 'Ops',
      agentDefaults: { model: 'fake-model' },
    });
    expect(definition!.webhooks[0]).toMatchObject({
      name: 'ci',
      authMode: 'signature',
      signatureScheme: 'github',
      secretName: 'CI_SECRET',
      deliveryIdHeader: 'X-CI-Run-Id',
      enabled: true,
    });
    expect(definition!.automations[0]).toMatchObject({
      name: 'triage',
      prompt: 'Triage the alert.',
      execution: { model: 'other-model' },
      triggers: [
        { webhookIds: [UID], payload: { event: ['deploy.finished'], env: { not_in: ['dev'] } } },
      ],
    });
    expect(definition!.files.map((f) => f.path)).not.toContain('README.md');
  });

  it.each([
    [
      'a missing factory.yaml',
      { 'factory.yaml': undefined },
      'factory.yaml',
      1,
      /factory.yaml is required/,
    ],
    [
      'a YAML syntax error',
      { 'webhooks/a.yaml': 'secretName: [X\nauthMode: token' },
      'webhooks/a.yaml',
      2,
      /YAML/,
    ],
    [
      'an alias without its anchor (fuzz seed 359275262: it answered 500)',
      { 'webhooks/a.yaml': '*y(c' },
      'webhooks/a.yaml',
      1,
      /YAML: Unresolved alias/,
    ],
    [
      'an unknown auth mode',
      { 'webhooks/a.yaml': 'secretName: S\nauthMode: basic\n' },
      'webhooks/a.yaml',
      2,
      /authMode.*token, url_token, signature/,
    ],
    [
      'signature mode without a scheme',
      { 'webhooks/a.yaml': 'secretName: S\nauthMode: signature\n' },
      'webhooks/a.yaml',
      2,
      /signatureScheme.*required/,
    ],
    [
      'an unsupported scheme',
      { 'webhooks/a.yaml': 'secretName: S\nauthMode: signature\nsignatureScheme: slack\n' },
      'webhooks/a.yaml',
      3,
      /signatureScheme/,
    ],
    [
      'a scheme without signature mode',
      { 'webhooks/a.yaml': 'secretName: S\nsignatureScheme: github\n' },
      'webhooks/a.yaml',
      2,
      /only allowed with authMode: signature/,
    ],
    [
      'a missing secretName',
      { 'webhooks/a.yaml': 'authMode: token\n' },
      'webhooks/a.yaml',
      1,
      /secretName" is required/,
    ],
    [
      'a credential deliveryIdHeader',
      { 'webhooks/a.yaml': 'secretName: S\ndeliveryIdHeader: Authorization\n' },
      'webhooks/a.yaml',
      2,
      /credential header/,
    ],
    [
      'a signature header as deliveryIdHeader',
      { 'webhooks/a.yaml': 'secretName: S\ndeliveryIdHeader: X-Hub-Signature-256\n' },
      'webhooks/a.yaml',
      2,
      /credential header/,
    ],
    [
      'an invalid header name',
      { 'webhooks/a.yaml': 'secretName: S\ndeliveryIdHeader: "X Run"\n' },
      'webhooks/a.yaml',
      2,
      /valid HTTP header name/,
    ],
    [
      'an unknown webhook key',
      { 'webhooks/a.yaml': 'secretName: S\nsecret: plain\n' },
      'webhooks/a.yaml',
      2,
      /unknown key "secret"/,
    ],
    [
      'a file name in webhook_ids',
      {
        'automations/x/automation.md': automation(
          'triggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [ci]',
        ),
      },
      'automations/x/automation.md',
      6,
      /not a webhook UID.*not file names/,
    ],
    [
      'missing webhook_ids',
      {
        'automations/x/automation.md': automation(
          'triggers:\n  - provider: webhook\n    event: received\n    filter: {payload: {a: [1]}}',
        ),
      },
      'automations/x/automation.md',
      5,
      /webhook_ids" is required/,
    ],
    [
      'a bad payload filter',
      {
        'automations/x/automation.md': automation(
          `triggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [${UID}]\n      payload:\n        env: {in: prod}`,
        ),
      },
      'automations/x/automation.md',
      8,
      /payload.env.in: in must be a list/,
    ],
    [
      'another provider',
      {
        'automations/x/automation.md': automation(
          'triggers:\n  - provider: github\n    event: push',
        ),
      },
      'automations/x/automation.md',
      3,
      /not supported by Ambient/,
    ],
    [
      'an empty prompt',
      {
        'automations/x/automation.md': automation(
          `triggers:\n  - provider: webhook\n    event: received\n    filter: {webhook_ids: [${UID}]}`,
          '',
        ),
      },
      'automations/x/automation.md',
      6,
      /prompt.*empty/,
    ],
    [
      'no front matter',
      { 'automations/x/automation.md': 'just text' },
      'automations/x/automation.md',
      1,
      /front matter/,
    ],
    [
      'an unknown agent',
      {
        'automations/x/automation.md': automation(
          `agent: ghost\ntriggers:\n  - provider: webhook\n    event: received\n    filter: {webhook_ids: [${UID}]}`,
        ),
      },
      'automations/x/automation.md',
      2,
      /agent "ghost" is not defined/,
    ],
    [
      'a misplaced webhook file',
      { 'webhooks/a.yml': 'secretName: S' },
      'webhooks/a.yml',
      1,
      /webhooks\/<name>.yaml/,
    ],
    [
      'a wrong schema version',
      { 'factory.yaml': 'schemaVersion: v2\nname: X\n' },
      'factory.yaml',
      1,
      /v1alpha1/,
    ],
    [
      'model and harness together',
      {
        'factory.yaml':
          'schemaVersion: v1alpha1\nname: X\nagentDefaults:\n  model: a\n  harness: {type: oz}\n',
      },
      'factory.yaml',
      5,
      /either "model" or "harness"/,
    ],
  ])('reports %s with file, line and reason', (_what, extra, path, line, message) => {
    const given = Object.entries({ 'factory.yaml': factoryYaml, ...extra })
      .filter(([, content]) => content !== undefined)
      .map(([p, content]) => ({ path: p, content: content as string }));
    const { definition, diagnostics } = parseDefinition(given, { strictPaths: false, vocabulary });
    expect(definition).toBeNull();
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ path, line, message: expect.stringMatching(message) }),
    );
  });

  it('allows at most 20 webhooks', () => {
    const extra = Object.fromEntries(
      Array.from({ length: 21 }, (_, i) => [
        `webhooks/w${String(i).padStart(2, '0')}.yaml`,
        'secretName: S',
      ]),
    );
    const { diagnostics } = parseDefinition(files(extra), { strictPaths: false, vocabulary });
    expect(diagnostics).toEqual([
      expect.objectContaining({
        path: 'webhooks/w20.yaml',
        message: expect.stringMatching(/at most 20 webhooks/),
      }),
    ]);
  });

  it('refuses files outside the layout only in strict mode, and unsafe paths always', () => {
    expect(
      parseDefinition(files({ 'notes.txt': 'x' }), { strictPaths: true, vocabulary })
        .diagnostics[0],
    ).toMatchObject({ path: 'notes.txt', code: 'unknown_file' });
    expect(
      parseDefinition(files({ 'notes.txt': 'x' }), { strictPaths: false, vocabulary }).diagnostics,
    ).toEqual([]);
    expect(
      parseDefinition(files({ '../x.yaml': 'x' }), { strictPaths: false, vocabulary })
        .diagnostics[0].code,
    ).toBe('invalid_path');
  });

  it('reports every problem at once', () => {
    const { diagnostics } = parseDefinition(
      files({ 'webhooks/a.yaml': 'authMode: basic\n', 'webhooks/b.yaml': 'secretName: 9bad\n' }),
      { strictPaths: false, vocabulary },
    );
    expect(diagnostics.map((d) => d.path)).toEqual([
      'webhooks/a.yaml',
      'webhooks/a.yaml',
      'webhooks/b.yaml',
    ]);
  });

  it('takes harness types and signature schemes from the vocabulary (the registries), not a list', () => {
    const definition = (vocab: DefinitionVocabulary) =>
      parseDefinition(
        files({
          'factory.yaml':
            'schemaVersion: v1alpha1\nname: Ops\nagentDefaults:\n  harness: {type: hello}\n',
          'webhooks/hi.yaml': 'authMode: signature\nsignatureScheme: hello-hmac\nsecretName: HI\n',
        }),
        { strictPaths: false, vocabulary: vocab },
      );
    const builtInOnly = definition(vocabulary);
    expect(builtInOnly.diagnostics.map((d) => d.path).sort()).toEqual([
      'factory.yaml',
      'webhooks/hi.yaml',
    ]);
    const extended = definition({
      ...vocabulary,
      harnessTypes: [...vocabulary.harnessTypes, 'hello'],
      signatureSchemes: [...vocabulary.signatureSchemes, 'hello-hmac'],
    });
    expect(extended.diagnostics).toEqual([]);
    expect(extended.definition!.factory.agentDefaults).toEqual({ harness: { type: 'hello' } });
    expect(extended.definition!.webhooks[0]).toMatchObject({ signatureScheme: 'hello-hmac' });
  });
});
