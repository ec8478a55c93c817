import type { AppConfig } from '../config/app-config';
import type { KeyOrigin } from '../config/key-files';
import { parseDatabaseUrl } from '../database/database-url';

export interface StartedUrls {
  apiUrl: string | null;
  ingressUrl: string | null;
  metricsUrl: string | null;
  sandbox: string | null;
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
  const startup = {
    roles: config.roles,
    api: started.apiUrl,
    ingress: started.ingressUrl,
    metrics: started.metricsUrl,
    database: `${db.host}:${db.port}/${db.database}`,
    redis: `${redis.hostname}:${redis.port || 6379} (prefix ${config.redis.prefix})`,
    sandbox: started.sandbox,
    keys,
  };
  const parts = [
    `roles ${config.roles.join(', ')}`,
    started.apiUrl && `API on ${started.apiUrl}`,
    started.ingressUrl && `ingress on ${started.ingressUrl}`,
    started.metricsUrl && `metrics on ${started.metricsUrl}`,
    `database ${startup.database}`,
    `redis ${startup.redis}`,
    started.sandbox && `sandbox ${started.sandbox}`,
    `keys ${Object.entries(keys)
      .map(([name, state]) => `${name} ${state}`)
      .join(', ')}`,
  ];
  return { msg: parts.filter(Boolean).join('; '), startup };
}
