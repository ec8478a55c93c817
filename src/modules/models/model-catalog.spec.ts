import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModelCatalog } from './model-catalog';

/** The directories catalogFile made, removed once the file's tests are done. */
const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function catalogFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'models-'));
  made.push(dir);
  const file = join(dir, 'models.yaml');
  writeFileSync(file, text);
  return file;
}

describe('loadModelCatalog', () => {
  it('loads the shipped catalogue and disables models whose provider key is missing', () => {
    const catalog = loadModelCatalog('config/models.yaml', { OPENAI_API_KEY: 'sk-test' });
    const gpt = catalog.models.find((m) => m.id === catalog.defaultModelId)!;
    expect(gpt.provider.kind).toBe('OPENAI');
    expect(gpt.disableReason).toBeUndefined();
    expect(gpt.inputCostPerTokenUsd).toBeCloseTo(1.25e-6);
    const claude = catalog.models.find((m) => m.provider.kind === 'ANTHROPIC')!;
    expect(claude.disableReason).toBe('ADMIN_DISABLED');
    expect(claude.disableDetail).toContain('ANTHROPIC_API_KEY');
    // Disabled only for want of its key: the models API says so (missing_provider_key).
    expect(claude.missingProviderKey).toBe('ANTHROPIC_API_KEY');
    expect(gpt.missingProviderKey).toBeUndefined();
    // Anthropic is spoken to natively; Google through its OpenAI-compatible endpoint.
    expect(claude.provider.api).toBe('anthropic_messages');
    expect(claude.maxOutputTokens).toBeGreaterThan(0);
    expect(catalog.models.find((m) => m.provider.kind === 'GOOGLE')!.provider.api).toBe(
      'chat_completions',
    );
  });

  it('lets a provider name its API (an Anthropic model behind an OpenAI-compatible gateway)', () => {
    const file = catalogFile(
      'providers:\n  gateway:\n    kind: ANTHROPIC\n    api: chat_completions\n    base_url: http://gw/v1\n' +
        'models:\n  - id: m\n    provider: gateway\n    max_output_tokens: 2048\n',
    );
    const [model] = loadModelCatalog(file, {}).models;
    expect(model.provider.api).toBe('chat_completions');
    expect(model.maxOutputTokens).toBe(2048);
  });

  it('takes the base URL from the environment when base_url_env is set', () => {
    const file = catalogFile(
      'providers:\n  local:\n    base_url: http://a/v1\n    base_url_env: LOCAL_URL\nmodels:\n  - id: m\n    provider: local\n',
    );
    expect(loadModelCatalog(file, { LOCAL_URL: 'http://b/v1/' }).models[0].provider.baseUrl).toBe(
      'http://b/v1',
    );
  });

  it.each([
    ['models:\n  - id: m\n    provider: nowhere\n', /unknown provider "nowhere"/],
    ['providers:\n  p:\n    base_url: http://x\nmodels: []\n', /lists no models/],
    [
      'default_model_id: z\nproviders:\n  p:\n    base_url: http://x\nmodels:\n  - id: m\n    provider: p\n',
      /default_model_id "z"/,
    ],
    [
      'providers:\n  p:\n    api: grpc\n    base_url: http://x\nmodels:\n  - id: m\n    provider: p\n',
      /providers\.p\.api must be one of chat_completions, anthropic_messages/,
    ],
    [
      'providers:\n  p:\n    base_url: http://x\nmodels:\n  - id: m\n    provider: p\n    max_output_tokens: 0\n',
      /models\[0\] \(m\): max_output_tokens must be a positive whole number/,
    ],
  ])('refuses a bad catalogue with the reason (%#)', (text, reason) => {
    expect(() => loadModelCatalog(catalogFile(text), {})).toThrow(reason);
  });
});
