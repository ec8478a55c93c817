import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { EgressAllowList } from '../common/egress/egress-allow-list';
import {
  type BlobDriver,
  checkS3Settings,
  checkUrlSigningKey,
  type S3Settings,
} from './blob-settings';
import { ConfigError } from './config-error';
import { effectiveModelsFile } from './models-file';
import { defaultPublicUrls } from './public-urls';
import { checkSandboxSettings, type SandboxSettings } from './sandbox-settings';
import { parseSecretsKey, previousSecretsKeys } from './secrets-keys';
import { coerce, getPath, type Role, setPath } from './setting-values';
import { type LogFormat, type LogLevelName, SETTINGS } from './settings-table';
import { checkSignInSettings, type SignInSettings } from './sign-in-settings';

// The settings of each concern live beside this file; importers know this one.
export { ConfigError } from './config-error';
export { ROLES, type Role } from './setting-values';
export type { BlobDriver, S3Settings } from './blob-settings';
export type { SandboxSettings } from './sandbox-settings';
export type { SignInSettings } from './sign-in-settings';
export type { LogFormat, LogLevelName } from './settings-table';

export interface AppConfig {
  server: {
    host: string;
    port: number;
    /** AMBIENT_PUBLIC_URL, else this listener's address (public-urls.ts). */
    publicUrl: string;
    /** True when publicUrl was not configured and follows the API listener's port. */
    publicUrlFollowsListener?: boolean;
    /**
     * The API base URL (…/api/v1) this process's workers reach the API at, bridged into sandboxes;
     * unset = this process's own listener when it serves the API, else publicUrl + /api/v1.
     */
    internalApiUrl?: string;
    shutdownTimeoutMs: number;
    /** The built web console (`npm run build` writes dist/console), served at /console. */
    consoleDir: string;
  };
  roles: Role[];
  database: { url: string; poolSize: number; migrateOnStart: boolean };
  /**
   * `cacheTtlMs`: the longest an in-process cache (API keys, limits, webhooks) serves an entry;
   * changes are broadcast on Redis at once, so it bounds only a lost broadcast. 0 = no caching.
   */
  redis: { url: string; prefix: string; cacheTtlMs: number };
  models: { file: string };
  runs: {
    workerConcurrency: number;
    dispatchSweepIntervalMs: number;
    dispatchGraceMs: number;
    leaseMs: number;
    maxAttempts: number;
    maxTurns: number;
    maxRunSeconds: number;
    commandTimeoutSeconds: number;
    workspaceRoot: string;
    /** Names the disk behind workspaceRoot; processes sharing that disk share the name. */
    workspaceVolume: string;
    metadataFilterEnabled: boolean;
    computeCostPerHourUsd: number;
    /** Keep-alive comment interval of the per-run live stream (`GET …/runs/{id}/stream`). */
    streamHeartbeatMs: number;
    /**
     * AMBIENT_BLOCKED_TIMEOUT: how long a BLOCKED run waits for a person's decision; its workspace
     * is kept that long, then the run fails with `approval_timeout`.
     */
    blockedTimeoutSeconds: number;
  };
  schedules: { tickIntervalMs: number; catchUpWindowSeconds: number };
  identities: { defaultAgentLimit: number };
  ingress: { host: string; port: number };
  /** Processes without the api role serve the health probes on `port` when it is set. */
  health?: { port?: number };
  webhooks: {
    /** AMBIENT_WEBHOOK_BASE_URL, else the ingress listener's address (public-urls.ts). */
    baseUrl: string;
    /** True when baseUrl was not configured and follows the ingress listener's port. */
    baseUrlFollowsListener?: boolean;
    deliveriesPerMinute: number;
    authFailuresPerMinute: number;
    logRetentionDays: number;
    logKeepLatest: number;
    housekeepingIntervalMs: number;
    housekeepingBatch: number;
    sweepIntervalMs: number;
    sweepGraceMs: number;
    /** Deliveries one worker process evaluates at once. */
    evaluationConcurrency: number;
  };
  /** Outgoing notification webhooks: retries wait base·2^(n-1), at most cap, maxAttempts in all. */
  notifications: {
    backoffBaseMs: number;
    backoffCapMs: number;
    maxAttempts: number;
    timeoutMs: number;
    sweepIntervalMs: number;
    sweepGraceMs: number;
    concurrency: number;
    /** Finished deliveries older than this are deleted (pending ones never). */
    logRetentionDays: number;
  };
  factories: { pollIntervalMs: number; repositoryProtocols: string };
  /**
   * Connections made on a tenant's behalf (MCP `url` servers, factory repositories) never reach
   * loopback, private, link-local or unique-local addresses except what `allow`
   * (AMBIENT_EGRESS_ALLOW: CIDRs, addresses, host[:port], comma-separated) lists.
   */
  egress: {
    allow: string;
    /**
     * AMBIENT_EGRESS_UPSTREAM_CA: a PEM file of CA certificates the sandboxes' egress proxy trusts
     * upstream beside Node's own (a company's private CA); unset: none.
     */
    upstreamCaFile?: string;
  };
  selfHosted: { claimTimeoutMs: number; readTimeoutMs: number };
  /** Transcripts and artifact files; downloads go through HMAC-signed, time-limited URLs. */
  blobs: {
    driver: BlobDriver;
    /** Local-disk driver: the directory. */
    root: string;
    /**
     * AMBIENT_URL_SIGNING_KEY (HMAC key of download URLs). Unset after loadConfig when the
     * environment has none: provideKeys (key-files.ts) then reads or creates its key file.
     */
    signingKey?: string;
    urlTtlSeconds: number;
    s3: S3Settings;
  };
  environments: {
    /** Prefix of `<owner>/<repo>` clone URLs (e.g. https://github.com or a local dir of bare repos). */
    gitUrlBase: string;
    setupTimeoutSeconds: number;
    /** How often retained (debug-window) workspaces of failed setups are looked for and deleted. */
    retentionSweepIntervalMs: number;
    /** How often workers remove workspace directories no run accounts for (also once at start). */
    orphanSweepIntervalMs: number;
    /** Prepared workspaces kept so the next run of an environment skips setup (workspace/). */
    snapshots: { enabled: boolean; maxBytesPerTeam: number; maxAgeHours: number };
  };
  skills: { cacheTtlSeconds: number };
  /** `Idempotency-Key`s of create and action POSTs: how long a key and its answer are kept. */
  idempotency: { ttlHours: number };
  /** The audit log: events older than `retentionDays` are swept. */
  audit: { retentionDays: number };
  /** Console single sign-on (OpenID Connect); `oidcIssuer` unset = off. See src/modules/sign-in. */
  signIn: SignInSettings;
  /** Where agent-controlled programs run (`src/modules/workers/sandbox`). */
  sandbox: SandboxSettings;
  /** Vendor CLIs behind the `claude`, `codex` and `gemini` harnesses (a name on PATH or a path). */
  vendorClis: { claudeBin: string; codexBin: string; geminiBin: string };
  /** Where generated key files live when AMBIENT_SECRETS_KEY / AMBIENT_URL_SIGNING_KEY are unset. */
  keys: { dir: string };
  bootstrapApiKey?: string;
  /**
   * AMBIENT_SECRETS_KEY: 32 bytes (base64 or hex) that encrypt team secrets; unset after loadConfig
   * when the environment has none (provideKeys then reads or creates its key file).
   */
  secretsKey?: Buffer;
  /**
   * AMBIENT_SECRETS_PREVIOUS_KEYS: earlier keys (comma-separated) that still decrypt values not yet
   * re-encrypted with the current key (`npm run cli -- secrets reencrypt`).
   */
  secretsPreviousKeys: Buffer[];
  /** Logs: JSON lines (for collectors) or a pretty format (for a terminal); unset format = by TTY. */
  log: { format?: LogFormat; level: LogLevelName };
  /**
   * Prometheus metrics: `GET /metrics` on a listener of its own at `host:port` (loopback unless
   * configured; `port` null = `off`, no listener). With `token` set, every scrape must send it as
   * a bearer token, and the API's port serves `/metrics` too; without one it never does.
   */
  metrics: { port: number | null; host: string; token?: string };
  /** AMBIENT_EXTENSIONS: comma-separated module paths (from the working directory) or packages. */
  extensions?: string;
}

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
