import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { EgressAllowList } from '../common/egress/egress-allow-list';
import { checkS3Settings, checkUrlSigningKey } from './blob-settings';
import { ConfigError } from './config-error';
import { effectiveModelsFile } from './models-file';
import { defaultPublicUrls } from './public-urls';
import { checkSandboxSettings } from './sandbox-settings';
import { parseSecretsKey, previousSecretsKeys } from './secrets-keys';
import { coerce, getPath, setPath } from './setting-values';
import { SETTINGS } from './settings-table';
import { checkSignInSettings } from './sign-in-settings';
import type { AppConfig } from './app-config.types';

// The settings of each concern live beside this file; importers know this one.
export type { AppConfig } from './app-config.types';
export { ConfigError } from './config-error';
export { ROLES, type Role } from './setting-values';
export type { BlobDriver, BlobSettings, S3Settings } from './blob-settings';
export type { SandboxSettings } from './sandbox-settings';
export type { SignInSettings } from './sign-in-settings';
export type { LogFormat, LogLevelName } from './settings-table';

/**
 * Reads config/default.yaml (or AMBIENT_CONFIG_FILE), applies environment overrides and
 * validates every value. `overrides` lets tests and tools inject settings without touching env.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Record<string, unknown> = {},
): AppConfig {
  const file = resolve(env.AMBIENT_CONFIG_FILE ?? 'config/default.yaml');
  let tree: Record<string, unknown>;
  try {
    tree = (parseYaml(readFileSync(file, 'utf8')) as Record<string, unknown>) ?? {};
  } catch (err) {
    throw new ConfigError(`AMBIENT_CONFIG_FILE: cannot read ${file}: ${(err as Error).message}`);
  }
  for (const setting of SETTINGS) {
    const fromEnv = env[setting.env];
    const hasOverride = setting.path in overrides;
    const raw = hasOverride
      ? overrides[setting.path]
      : fromEnv !== undefined && fromEnv !== ''
        ? fromEnv
        : getPath(tree, setting.path);
    const source = hasOverride
      ? setting.path
      : fromEnv !== undefined && fromEnv !== ''
        ? setting.env
        : `${file}: ${setting.path}`;
    if (raw === undefined || raw === null || (setting.optional && raw === '')) {
      if (setting.optional) continue;
      throw new ConfigError(`${setting.env}: missing (set it or ${setting.path} in ${file})`);
    }
    setPath(tree, setting.path, coerce(setting, raw, source));
  }
  const config = tree as unknown as AppConfig;
  config.models.file = effectiveModelsFile(
    config.models.file,
    'models.file' in overrides || Boolean(env.AMBIENT_MODELS_FILE),
  );
  defaultPublicUrls(config);
  config.egress = { ...config.egress, allow: checkEgressAllow(config.egress?.allow) };
  const metricsToken = overrides['metrics.token'] ?? env.AMBIENT_METRICS_TOKEN;
  if (typeof metricsToken === 'string' && metricsToken !== '') {
    if (metricsToken.length < 16 || /\s/.test(metricsToken)) {
      throw new ConfigError('AMBIENT_METRICS_TOKEN: must be at least 16 characters, no spaces');
    }
    config.metrics.token = metricsToken;
  }
  if (config.runs.workspaceVolume === 'auto') config.runs.workspaceVolume = hostname();
  if (config.runs.workspaceVolume.length > 128) {
    throw new ConfigError('AMBIENT_WORKSPACE_VOLUME: at most 128 characters');
  }
  const bootstrap = overrides.bootstrapApiKey ?? env.AMBIENT_BOOTSTRAP_API_KEY;
  if (typeof bootstrap === 'string' && bootstrap !== '') {
    if (bootstrap.length < 16) {
      throw new ConfigError('AMBIENT_BOOTSTRAP_API_KEY: must be at least 16 characters');
    }
    config.bootstrapApiKey = bootstrap;
  }
  const secretsKey = overrides.secretsKey ?? env.AMBIENT_SECRETS_KEY;
  if (typeof secretsKey === 'string' && secretsKey !== '') {
    config.secretsKey = parseSecretsKey(secretsKey, 'AMBIENT_SECRETS_KEY');
  }
  const previousKeys = overrides.secretsPreviousKeys ?? env.AMBIENT_SECRETS_PREVIOUS_KEYS;
  config.secretsPreviousKeys = previousSecretsKeys(previousKeys as string | undefined, config);
  if (!/^mysql:\/\//.test(config.database.url) && !/^mariadb:\/\//.test(config.database.url)) {
    throw new ConfigError('DATABASE_URL: must start with mysql:// or mariadb://');
  }
  checkS3Settings(config.blobs);
  checkSignInSettings(config);
  if (config.blobs.signingKey !== undefined) checkUrlSigningKey(config.blobs.signingKey);
  checkSandboxSettings(config.sandbox);
  if (!/^rediss?:\/\//.test(config.redis.url)) {
    throw new ConfigError('REDIS_URL: must start with redis:// or rediss://');
  }
  return config;
}

/** AMBIENT_EGRESS_ALLOW, checked (an unreadable entry stops start-up) and '' when unset. */
export function checkEgressAllow(allow: string | undefined): string {
  try {
    EgressAllowList.parse(allow);
  } catch (err) {
    throw new ConfigError(`AMBIENT_EGRESS_ALLOW: ${(err as Error).message}`);
  }
  return allow ?? '';
}

export { APP_CONFIG } from '../common/app-config.token';
