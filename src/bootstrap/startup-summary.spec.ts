import { loadConfig } from '../config/app-config';
import type { KeyOrigin } from '../config/key-files';
import { loadModelCatalog } from '../modules/models/model-catalog';
import { keyStates, modelWarning, startupSummary } from './startup-summary';

const config = (env: Record<string, string> = {}) =>
  loadConfig({
    AMBIENT_CONFIG_FILE: 'config/default.yaml',
    DATABASE_URL: 'mysql://ambient:hunter2@db.internal:3307/prod',
    ...env,
  });

describe('startupSummary', () => {
  it('names roles, URLs, database and Redis without the password', () => {
    const summary = startupSummary(
      config(),
      {
        apiUrl: 'http://127.0.0.1:8080/api/v1',
        ingressUrl: 'http://127.0.0.1:8081',
        metricsUrl: 'http://127.0.0.1:9464/metrics',
        sandbox: 'docker',
        models: loadModelCatalog('config/models.yaml', { OPENAI_API_KEY: 'sk-test' }),
      },
      [],
    );
    expect(summary.startup).toMatchObject({
      roles: ['api', 'ingress', 'worker', 'scheduler'],
      database: 'db.internal:3307/prod',
      redis: '127.0.0.1:6379 (prefix ambient)',
      sandbox: 'docker',
    });
    expect(summary.msg).toMatch(
      /^roles api, ingress, worker, scheduler; API on http:\/\/127\.0\.0\.1:8080\/api\/v1; console (on|not built \(npm run build, then) http:\/\/localhost:8080\/console\/\)?; API docs on http:\/\/localhost:8080\/api\/docs; models gpt-5-4-high, gpt-5-4-mini \(default gpt-5-4-high\); ingress on .*; metrics on .*; database db\.internal:3307\/prod; /,
    );
    expect(summary.startup).toMatchObject({
      api_docs: 'http://localhost:8080/api/docs',
      models: { enabled: ['gpt-5-4-high', 'gpt-5-4-mini'], default: 'gpt-5-4-high' },
    });
    expect(JSON.stringify(summary)).not.toContain('hunter2');
  });

  it('repeats the sandbox warning (what to fix) beside the backend', () => {
    const fix = 'runs without an environment image will fail: image "x:y" is missing: build it';
    const summary = startupSummary(
      config(),
      {
        apiUrl: null,
        ingressUrl: null,
        metricsUrl: null,
        sandbox: 'docker',
        sandboxWarning: fix,
        models: null,
      },
      [],
    );
    expect(summary.startup).toMatchObject({ sandbox: 'docker', sandbox_warning: fix });
    expect(summary.msg).toContain(`sandbox docker (${fix})`);
  });

  it('says where each key came from, never its value', () => {
    const secrets = 'ab'.repeat(32);
    const set = config({
      AMBIENT_SECRETS_KEY: secrets,
      AMBIENT_URL_SIGNING_KEY: 'operator-signing-key',
      AMBIENT_BOOTSTRAP_API_KEY: 'amb_operator_key_0123456789',
    });
    const origins: KeyOrigin[] = [
      { env: 'AMBIENT_SECRETS_KEY', source: 'env' },
      { env: 'AMBIENT_URL_SIGNING_KEY', source: 'created', path: '/srv/var/keys/url-signing.key' },
    ];
    expect(keyStates(set, origins)).toEqual({
      AMBIENT_SECRETS_KEY: 'set',
      AMBIENT_URL_SIGNING_KEY: 'generated /srv/var/keys/url-signing.key',
      AMBIENT_BOOTSTRAP_API_KEY: 'set',
    });
    expect(
      keyStates(config(), [
        { env: 'AMBIENT_SECRETS_KEY', source: 'file', path: 'var/keys/secrets.key' },
        { env: 'AMBIENT_URL_SIGNING_KEY', source: 'none' },
      ]),
    ).toEqual({
      AMBIENT_SECRETS_KEY: 'key file var/keys/secrets.key',
      AMBIENT_URL_SIGNING_KEY: 'unset',
      AMBIENT_BOOTSTRAP_API_KEY: 'unset',
    });
    const { msg } = startupSummary(
      set,
      { apiUrl: null, ingressUrl: null, metricsUrl: null, sandbox: null, models: null },
      origins,
    );
    expect(msg).toContain('AMBIENT_URL_SIGNING_KEY generated /srv/var/keys/url-signing.key');
    expect(msg).not.toContain(secrets);
    expect(msg).not.toContain('operator-signing-key');
  });

  it('says how to enable a model when the default one cannot run', () => {
    const none = modelWarning(loadModelCatalog('config/models.yaml', {}), 'config/models.yaml');
    expect(none).toBe(
      'no model is enabled, so no run can start: set a provider key (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY) or enable the local OpenAI-compatible provider in config/models.yaml (README "First run in 5 minutes")',
    );
    const otherKey = loadModelCatalog('config/models.yaml', { ANTHROPIC_API_KEY: 'sk-ant' });
    expect(modelWarning(otherKey, 'config/models.yaml')).toMatch(
      /^the default model gpt-5-4-high is disabled: runs must name a model \(claude-4-6-opus-high, claude-haiku-4-5\)/,
    );
    const openai = loadModelCatalog('config/models.yaml', { OPENAI_API_KEY: 'sk-test' });
    expect(modelWarning(openai, 'config/models.yaml')).toBeNull();
    expect(modelWarning(null, 'config/models.yaml')).toBeNull();
  });
});
