import type { AppConfig } from '../config/app-config';
import type { KeyOrigin } from '../config/key-files';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describeDatabaseServer, parseDatabaseUrl } from '../database/database-url';
import type { ModelCatalog } from '../modules/models/model-catalog';

export interface StartedUrls {
  apiUrl: string | null;
  ingressUrl: string | null;
  metricsUrl: string | null;
  sandbox: string | null;
  /** What to fix so that runs start isolated; repeated in the summary beside the backend. */
  sandboxWarning?: string | null;
  models: ModelCatalog | null;
}

type KeyState = 'set' | 'unset' | `key file ${string}` | `generated ${string}`;

/** Which keys the process runs with (never their values): the environment, a key file, or none. */
export function keyStates(config: AppConfig, origins: KeyOrigin[]): Record<string, KeyState> {
  const states: Record<string, KeyState> = {};
  for (const origin of origins) {
    states[origin.env] =
      origin.source === 'env'
        ? 'set'
        : origin.source === 'file'
          ? `key file ${origin.path}`
          : origin.source === 'created'
            ? `generated ${origin.path}`
            : 'unset';
  }
  states.AMBIENT_BOOTSTRAP_API_KEY = config.bootstrapApiKey ? 'set' : 'unset';
  return states;
}

/**
 * The one start-up line: what runs where, against what (no passwords, no key values). The
 * message reads on a terminal; `startup` carries the same as fields for JSON logs.
 */
export function startupSummary(
  config: AppConfig,
  started: StartedUrls,
  keyOrigins: KeyOrigin[],
): { msg: string; startup: Record<string, unknown> } {
  const db = parseDatabaseUrl(config.database.url);
  const redis = new URL(config.redis.url);
  const keys = keyStates(config, keyOrigins);
  // Opened at the public URL: the console follows the API's links there (its CSP allows only
  // its own origin), and the public URL follows this listener unless configured.
  const publicUrl = config.server.publicUrl.replace(/\/+$/, '');
  const consoleBuilt = existsSync(join(config.server.consoleDir, 'index.html'));
  const consoleUrl = started.apiUrl ? `${publicUrl}/console/` : null;
  const docsUrl = started.apiUrl ? `${publicUrl}/api/docs` : null;
  const models = started.models && modelSummary(started.models);
  const startup = {
    roles: config.roles,
    api: started.apiUrl,
    console: consoleUrl && (consoleBuilt ? consoleUrl : null),
    api_docs: docsUrl,
    models,
    ingress: started.ingressUrl,
    metrics: started.metricsUrl,
    database: `${describeDatabaseServer(db)}/${db.database}`,
    redis: `${redis.hostname}:${redis.port || 6379} (prefix ${config.redis.prefix})`,
    sandbox: started.sandbox,
    ...(started.sandboxWarning ? { sandbox_warning: started.sandboxWarning } : {}),
    keys,
  };
  const parts = [
    `roles ${config.roles.join(', ')}`,
    started.apiUrl && `API on ${started.apiUrl}`,
    consoleUrl &&
      (consoleBuilt
        ? `console on ${consoleUrl}`
        : `console not built (npm run build, then ${consoleUrl})`),
    docsUrl && `API docs on ${docsUrl}`,
    models &&
      (models.enabled.length
        ? `models ${models.enabled.join(', ')} (default ${models.default})`
        : 'models: none enabled'),
    started.ingressUrl && `ingress on ${started.ingressUrl}`,
    started.metricsUrl && `metrics on ${started.metricsUrl}`,
    `database ${startup.database}`,
    `redis ${startup.redis}`,
    started.sandbox &&
      `sandbox ${started.sandbox}${started.sandboxWarning ? ` (${started.sandboxWarning})` : ''}`,
    `keys ${Object.entries(keys)
      .map(([name, state]) => `${name} ${state}`)
      .join(', ')}`,
  ];
  return { msg: parts.filter(Boolean).join('; '), startup };
}

interface ModelSummary {
  enabled: string[];
  default: string;
  /** Whether runs that name no model can start (the default model is enabled). */
  default_enabled: boolean;
}

function modelSummary(catalog: ModelCatalog): ModelSummary {
  const enabled = catalog.models.filter((m) => !m.disableReason).map((m) => m.id);
  return {
    enabled,
    default: catalog.defaultModelId,
    default_enabled: enabled.includes(catalog.defaultModelId),
  };
}

/**
 * What to fix when runs cannot start for want of a model (logged as a warning beside the
 * summary), or null when the default model is enabled.
 */
export function modelWarning(catalog: ModelCatalog | null, modelsFile: string): string | null {
  if (!catalog) return null;
  const summary = modelSummary(catalog);
  if (summary.default_enabled) return null;
  const keys = [
    ...new Set(
      catalog.models.flatMap((m) =>
        m.disableReason && m.provider.apiKeyEnv && !m.provider.apiKey ? [m.provider.apiKeyEnv] : [],
      ),
    ),
  ];
  const fix = [
    keys.length ? `set a provider key (${keys.join(', ')})` : null,
    `enable the local OpenAI-compatible provider in ${modelsFile} (README "First run in 5 minutes")`,
  ]
    .filter(Boolean)
    .join(' or ');
  if (summary.enabled.length === 0) return `no model is enabled, so no run can start: ${fix}`;
  return `the default model ${summary.default} is disabled: runs must name a model (${summary.enabled.join(', ')}), or set default_model_id in ${modelsFile}`;
}
