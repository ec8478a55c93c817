import type { AppConfig } from '../config/app-config';
import { parseDatabaseUrl } from '../database/database-url';

export interface StartedUrls {
  apiUrl: string | null;
  ingressUrl: string | null;
  metricsUrl: string | null;
  sandbox: string | null;
}

/** The url signing key config/default.yaml ships: fine on a laptop, not in production. */
const SHIPPED_SIGNING_KEY = 'ambient-dev-url-signing-key';

type KeyState = 'set' | 'unset' | 'generated' | 'default';

/** Which keys the process runs with (never their values): from the environment, a key file, or none. */
export function keyStates(config: AppConfig, env: NodeJS.ProcessEnv): Record<string, KeyState> {
  const given = (name: string) => Boolean(env[name]);
  return {
    AMBIENT_SECRETS_KEY: given('AMBIENT_SECRETS_KEY')
      ? 'set'
      : config.secretsKey
        ? 'generated'
        : 'unset',
    AMBIENT_URL_SIGNING_KEY: given('AMBIENT_URL_SIGNING_KEY')
      ? 'set'
      : config.blobs.signingKey === SHIPPED_SIGNING_KEY
        ? 'default'
        : 'generated',
    AMBIENT_BOOTSTRAP_API_KEY: config.bootstrapApiKey ? 'set' : 'unset',
  };
}

/**
 * The one start-up line: what runs where, against what (no passwords, no key values). The
 * message reads on a terminal; `startup` carries the same as fields for JSON logs.
 */
export function startupSummary(
  config: AppConfig,
  started: StartedUrls,
  env: NodeJS.ProcessEnv = process.env,
): { msg: string; startup: Record<string, unknown> } {
  const db = parseDatabaseUrl(config.database.url);
  const redis = new URL(config.redis.url);
  const keys = keyStates(config, env);
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
