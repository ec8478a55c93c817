import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';

export type ProviderKind = 'OPENAI' | 'ANTHROPIC' | 'GOOGLE' | 'UNKNOWN';
/** The wire API a provider speaks: OpenAI chat completions, or Anthropic's native Messages. */
export type ProviderApi = 'chat_completions' | 'anthropic_messages';
const APIS: ProviderApi[] = ['chat_completions', 'anthropic_messages'];
/** Anthropic requires a limit on each reply; models.yaml may set its own per model. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 8192;
export type DisableReason =
  'PROVIDER_OUTAGE' | 'OUT_OF_REQUESTS' | 'ADMIN_DISABLED' | 'REQUIRES_UPGRADE';

export interface ProviderEndpoint {
  name: string;
  kind: ProviderKind;
  api: ProviderApi;
  baseUrl: string;
  apiKey: string | null;
  apiKeyEnv: string | null;
}

export interface CatalogModel {
  id: string;
  displayName: string;
  description?: string;
  reasoningLevel?: string;
  visionSupported: boolean;
  provider: ProviderEndpoint;
  providerModel: string;
  maxOutputTokens: number;
  inputCostPerTokenUsd: number;
  outputCostPerTokenUsd: number;
  disableReason?: DisableReason;
  disableDetail?: string;
  /** The environment variable the provider's key is read from, when it is not set (disabled). */
  missingProviderKey?: string;
}

export interface ModelCatalog {
  defaultModelId: string;
  models: CatalogModel[];
}

interface RawProvider {
  kind?: string;
  api?: string;
  base_url?: string;
  base_url_env?: string;
  api_key_env?: string;
}

interface RawModel {
  id?: string;
  display_name?: string;
  description?: string;
  provider?: string;
  provider_model?: string;
  reasoning_level?: string;
  max_output_tokens?: number;
  vision_supported?: boolean;
  input_cost_per_million_usd?: number;
  output_cost_per_million_usd?: number;
  disabled?: boolean;
}

const KINDS: ProviderKind[] = ['OPENAI', 'ANTHROPIC', 'GOOGLE', 'UNKNOWN'];

/**
 * Reads the model catalogue (config/models.yaml). Throws with the file and the offending entry
 * named, so a bad catalogue stops start-up with a clear line.
 */
export function loadModelCatalog(file: string, env: NodeJS.ProcessEnv = process.env): ModelCatalog {
  const path = resolve(file);
  const fail = (why: string): never => {
    throw new Error(`AMBIENT_MODELS_FILE: ${path}: ${why}`);
  };
  let doc: {
    default_model_id?: string;
    providers?: Record<string, RawProvider>;
    models?: RawModel[];
  };
  try {
    doc = parseYaml(readFileSync(path, 'utf8')) ?? {};
  } catch (err) {
    return fail(`cannot read: ${(err as Error).message}`);
  }
  const providers = new Map<string, ProviderEndpoint>();
  for (const [name, raw] of Object.entries(doc.providers ?? {})) {
    const kind = (raw.kind ?? 'UNKNOWN').toUpperCase() as ProviderKind;
    if (!KINDS.includes(kind)) fail(`providers.${name}.kind must be one of ${KINDS.join(', ')}`);
    const baseUrl = (raw.base_url_env && env[raw.base_url_env]) || raw.base_url;
    if (!baseUrl) fail(`providers.${name}.base_url is required`);
    const api = (raw.api ??
      (kind === 'ANTHROPIC' ? 'anthropic_messages' : 'chat_completions')) as ProviderApi;
    if (!APIS.includes(api)) fail(`providers.${name}.api must be one of ${APIS.join(', ')}`);
    const apiKeyEnv = raw.api_key_env ?? null;
    providers.set(name, {
      name,
      kind,
      api,
      baseUrl: baseUrl!.replace(/\/+$/, ''),
      apiKeyEnv,
      apiKey: apiKeyEnv ? (env[apiKeyEnv] ?? null) : null,
    });
  }
  const models: CatalogModel[] = (doc.models ?? []).map((raw, i) => {
    if (!raw.id) fail(`models[${i}].id is required`);
    const provider = providers.get(raw.provider ?? '');
    if (!provider) fail(`models[${i}] (${raw.id}): unknown provider "${raw.provider}"`);
    const maxOutput = raw.max_output_tokens;
    if (maxOutput !== undefined && !(Number.isInteger(maxOutput) && maxOutput > 0)) {
      fail(`models[${i}] (${raw.id}): max_output_tokens must be a positive whole number`);
    }
    const model: CatalogModel = {
      id: raw.id!,
      displayName: raw.display_name ?? raw.id!,
      description: raw.description,
      reasoningLevel: raw.reasoning_level,
      visionSupported: raw.vision_supported ?? false,
      provider: provider!,
      providerModel: raw.provider_model ?? raw.id!,
      maxOutputTokens: raw.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
      inputCostPerTokenUsd: (raw.input_cost_per_million_usd ?? 0) / 1_000_000,
      outputCostPerTokenUsd: (raw.output_cost_per_million_usd ?? 0) / 1_000_000,
    };
    if (raw.disabled) {
      model.disableReason = 'ADMIN_DISABLED';
      model.disableDetail = 'disabled in the model catalogue';
    } else if (provider!.apiKeyEnv && !provider!.apiKey) {
      model.disableReason = 'ADMIN_DISABLED';
      model.disableDetail = `provider key ${provider!.apiKeyEnv} is not set`;
      model.missingProviderKey = provider!.apiKeyEnv;
    }
    return model;
  });
  if (models.length === 0) fail('lists no models');
  const defaultModelId = doc.default_model_id ?? models[0].id;
  if (!models.some((m) => m.id === defaultModelId)) {
    fail(`default_model_id "${defaultModelId}" is not one of the models`);
  }
  return { defaultModelId, models };
}
