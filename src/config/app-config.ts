import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { EgressAllowList } from '../common/egress/egress-allow-list';
import { DOCKER_IMAGES_SETTING, parseDockerImages } from './docker-images';
import { effectiveModelsFile } from './models-file';
import { defaultPublicUrls, oidcCallbackUrl } from './public-urls';
import { parseRoleMapping } from './role-mapping';

export const ROLES = ['api', 'ingress', 'worker', 'scheduler'] as const;
export type Role = (typeof ROLES)[number];

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
  /** Where agent-controlled programs run (`src/modules/execution/sandbox`). */
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

export interface SignInSettings {
  oidcIssuer?: string;
  oidcClientId?: string;
  /** Unset = a public client (PKCE only, `token_endpoint_auth_method: none`). */
  oidcClientSecret?: string;
  /** Set by loadConfig when SSO is on: the configured URL or the public URL's callback. */
  oidcRedirectUrl?: string;
  oidcScopes: string;
  oidcRoleClaim: string;
  /** `value=team:role,...` (role-mapping.ts reads it; checked at start-up). */
  oidcRoleMapping?: string;
  sessionTtlHours: number;
}

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

export const SANDBOX_SETTINGS_BACKENDS = ['auto', 'docker', 'bubblewrap', 'process'] as const;

export interface SandboxSettings {
  /** `auto`: docker when a daemon answers, else bubblewrap when bwrap works, else none (runs fail). */
  /** One of SANDBOX_SETTINGS_BACKENDS, or a backend an extension registers (checked at start-up). */
  backend: string;
  /** Network policy of environments that set none (and of runs without an environment). */
  network: 'none' | 'egress';
  /** Default limits of one sandbox, and the most an environment may ask for. */
  memoryMb: number;
  pids: number;
  cpus: number;
  maxMemoryMb: number;
  maxPids: number;
  maxCpus: number;
  /** bubblewrap: extra host directories visible read-only inside (comma-separated). */
  readonlyPaths: string;
  docker: {
    /** Image of runs whose environment names none. */
    defaultImage: string;
    /** AMBIENT_DOCKER_IMAGES as set: what environments may name (see docker-images.ts). */
    images?: string;
    /** `user[:group]` processes run as inside containers (never root). */
    user: string;
    /** OCI runtime, e.g. runsc (gVisor); unset = the daemon's default. */
    runtime?: string;
    /** Warm pool: ready containers of the default image (0 or unset: no pool). */
    poolSize?: number;
    /** Warm pool: the most ready containers of one image after a burst of demand. */
    poolMax?: number;
    /**
     * Commands through each container's launcher instead of a `docker exec` each (unset: on;
     * the backend still uses `docker exec` where the launcher cannot work).
     */
    launcher?: boolean;
  };
}

export const BLOB_DRIVERS = ['local', 's3'] as const;
export type BlobDriver = (typeof BLOB_DRIVERS)[number];

/** The S3-compatible bucket of the `s3` blob driver. */
export interface S3Settings {
  bucket?: string;
  region: string;
  /** For S3-compatible services (MinIO, Ceph, R2…); unset = AWS. */
  endpoint?: string;
  forcePathStyle: boolean;
  /** Prepended to every object key (`<prefix>/<namespace>/<name>`). */
  prefix?: string;
  /** Unset = the AWS SDK's default credential chain (environment, profile, instance role). */
  accessKeyId?: string;
  secretAccessKey?: string;
}

/** Thrown for a bad setting; main.ts prints its message as the single line that stops start-up. */
export class ConfigError extends Error {}

type Kind = 'string' | 'int' | 'number' | 'bool' | 'url' | 'roles';
interface Setting {
  path: string;
  env: string;
  kind: Kind;
  min?: number;
  max?: number;
  /** The only values a string setting may take. */
  oneOf?: readonly string[];
  /** May be left unset (absent from the file and the environment, or empty). */
  optional?: boolean;
  /** Also takes `off` (read as null): a port setting whose listener can be turned off. */
  allowOff?: boolean;
}

/** Every overridable setting: its place in the YAML tree, its environment variable and its type. */
const SETTINGS: Setting[] = [
  { path: 'server.host', env: 'AMBIENT_HOST', kind: 'string' },
  { path: 'server.port', env: 'AMBIENT_PORT', kind: 'int', min: 0, max: 65535 },
  { path: 'server.publicUrl', env: 'AMBIENT_PUBLIC_URL', kind: 'url', optional: true },
  {
    path: 'server.internalApiUrl',
    env: 'AMBIENT_INTERNAL_API_URL',
    kind: 'url',
    optional: true,
  },
  { path: 'server.shutdownTimeoutMs', env: 'AMBIENT_SHUTDOWN_TIMEOUT_MS', kind: 'int', min: 0 },
  { path: 'server.consoleDir', env: 'AMBIENT_CONSOLE_DIR', kind: 'string' },
  { path: 'roles', env: 'AMBIENT_ROLES', kind: 'roles' },
  { path: 'database.url', env: 'DATABASE_URL', kind: 'url' },
  { path: 'database.poolSize', env: 'AMBIENT_DB_POOL_SIZE', kind: 'int', min: 1, max: 1000 },
  { path: 'database.migrateOnStart', env: 'AMBIENT_MIGRATE_ON_START', kind: 'bool' },
  { path: 'redis.url', env: 'REDIS_URL', kind: 'url' },
  { path: 'redis.prefix', env: 'AMBIENT_REDIS_PREFIX', kind: 'string' },
  { path: 'redis.cacheTtlMs', env: 'AMBIENT_CACHE_TTL_MS', kind: 'int', min: 0, max: 60000 },
  { path: 'models.file', env: 'AMBIENT_MODELS_FILE', kind: 'string' },
  { path: 'runs.workerConcurrency', env: 'AMBIENT_WORKER_CONCURRENCY', kind: 'int', min: 1 },
  {
    path: 'runs.dispatchSweepIntervalMs',
    env: 'AMBIENT_DISPATCH_SWEEP_INTERVAL_MS',
    kind: 'int',
    min: 50,
  },
  { path: 'runs.dispatchGraceMs', env: 'AMBIENT_DISPATCH_GRACE_MS', kind: 'int', min: 0 },
  { path: 'runs.leaseMs', env: 'AMBIENT_RUN_LEASE_MS', kind: 'int', min: 300 },
  { path: 'runs.maxAttempts', env: 'AMBIENT_RUN_MAX_ATTEMPTS', kind: 'int', min: 1, max: 10 },
  { path: 'runs.maxTurns', env: 'AMBIENT_RUN_MAX_TURNS', kind: 'int', min: 1 },
  { path: 'runs.maxRunSeconds', env: 'AMBIENT_RUN_MAX_SECONDS', kind: 'int', min: 1 },
  {
    path: 'runs.commandTimeoutSeconds',
    env: 'AMBIENT_COMMAND_TIMEOUT_SECONDS',
    kind: 'int',
    min: 1,
  },
  { path: 'runs.streamHeartbeatMs', env: 'AMBIENT_STREAM_HEARTBEAT_MS', kind: 'int', min: 50 },
  { path: 'runs.workspaceRoot', env: 'AMBIENT_WORKSPACE_ROOT', kind: 'string' },
  { path: 'runs.workspaceVolume', env: 'AMBIENT_WORKSPACE_VOLUME', kind: 'string' },
  { path: 'vendorClis.claudeBin', env: 'AMBIENT_CLAUDE_BIN', kind: 'string' },
  { path: 'vendorClis.codexBin', env: 'AMBIENT_CODEX_BIN', kind: 'string' },
  { path: 'vendorClis.geminiBin', env: 'AMBIENT_GEMINI_BIN', kind: 'string' },
  { path: 'blobs.driver', env: 'AMBIENT_BLOB_DRIVER', kind: 'string', oneOf: BLOB_DRIVERS },
  { path: 'blobs.root', env: 'AMBIENT_BLOB_ROOT', kind: 'string' },
  { path: 'blobs.s3.bucket', env: 'AMBIENT_S3_BUCKET', kind: 'string', optional: true },
  { path: 'blobs.s3.region', env: 'AMBIENT_S3_REGION', kind: 'string' },
  { path: 'blobs.s3.endpoint', env: 'AMBIENT_S3_ENDPOINT', kind: 'url', optional: true },
  { path: 'blobs.s3.forcePathStyle', env: 'AMBIENT_S3_FORCE_PATH_STYLE', kind: 'bool' },
  { path: 'blobs.s3.prefix', env: 'AMBIENT_S3_PREFIX', kind: 'string', optional: true },
  { path: 'blobs.s3.accessKeyId', env: 'AMBIENT_S3_ACCESS_KEY_ID', kind: 'string', optional: true },
  {
    path: 'blobs.s3.secretAccessKey',
    env: 'AMBIENT_S3_SECRET_ACCESS_KEY',
    kind: 'string',
    optional: true,
  },
  { path: 'blobs.signingKey', env: 'AMBIENT_URL_SIGNING_KEY', kind: 'string', optional: true },
  { path: 'keys.dir', env: 'AMBIENT_KEY_DIR', kind: 'string' },
  { path: 'blobs.urlTtlSeconds', env: 'AMBIENT_SIGNED_URL_TTL_SECONDS', kind: 'int', min: 1 },
  { path: 'runs.metadataFilterEnabled', env: 'AMBIENT_METADATA_FILTER_ENABLED', kind: 'bool' },
  {
    path: 'runs.computeCostPerHourUsd',
    env: 'AMBIENT_COMPUTE_COST_PER_HOUR_USD',
    kind: 'number',
    min: 0,
  },
  { path: 'schedules.tickIntervalMs', env: 'AMBIENT_SCHEDULER_TICK_MS', kind: 'int', min: 50 },
  {
    path: 'schedules.catchUpWindowSeconds',
    env: 'AMBIENT_SCHEDULE_CATCH_UP_SECONDS',
    kind: 'int',
    min: 0,
  },
  {
    path: 'identities.defaultAgentLimit',
    env: 'AMBIENT_TEAM_AGENT_LIMIT',
    kind: 'int',
    min: 0,
  },
  { path: 'ingress.host', env: 'AMBIENT_INGRESS_HOST', kind: 'string' },
  { path: 'ingress.port', env: 'AMBIENT_INGRESS_PORT', kind: 'int', min: 0, max: 65535 },
  {
    path: 'health.port',
    env: 'AMBIENT_HEALTH_PORT',
    kind: 'int',
    min: 0,
    max: 65535,
    optional: true,
  },
  {
    path: 'webhooks.baseUrl',
    env: 'AMBIENT_WEBHOOK_BASE_URL',
    kind: 'url',
    optional: true,
  },
  {
    path: 'webhooks.deliveriesPerMinute',
    env: 'AMBIENT_WEBHOOK_DELIVERIES_PER_MINUTE',
    kind: 'int',
    min: 1,
  },
  {
    path: 'webhooks.authFailuresPerMinute',
    env: 'AMBIENT_WEBHOOK_AUTH_FAILURES_PER_MINUTE',
    kind: 'int',
    min: 1,
  },
  {
    path: 'webhooks.logRetentionDays',
    env: 'AMBIENT_WEBHOOK_LOG_RETENTION_DAYS',
    kind: 'int',
    min: 7,
  },
  { path: 'webhooks.logKeepLatest', env: 'AMBIENT_WEBHOOK_LOG_KEEP_LATEST', kind: 'int', min: 50 },
  {
    path: 'webhooks.housekeepingIntervalMs',
    env: 'AMBIENT_WEBHOOK_HOUSEKEEPING_INTERVAL_MS',
    kind: 'int',
    min: 50,
  },
  {
    path: 'webhooks.housekeepingBatch',
    env: 'AMBIENT_WEBHOOK_HOUSEKEEPING_BATCH',
    kind: 'int',
    min: 1,
  },
  {
    path: 'webhooks.sweepIntervalMs',
    env: 'AMBIENT_WEBHOOK_SWEEP_INTERVAL_MS',
    kind: 'int',
    min: 50,
  },
  { path: 'webhooks.sweepGraceMs', env: 'AMBIENT_WEBHOOK_SWEEP_GRACE_MS', kind: 'int', min: 0 },
  {
    path: 'webhooks.evaluationConcurrency',
    env: 'AMBIENT_WEBHOOK_EVALUATION_CONCURRENCY',
    kind: 'int',
    min: 1,
  },
  {
    path: 'notifications.backoffBaseMs',
    env: 'AMBIENT_NOTIFICATION_BACKOFF_BASE_MS',
    kind: 'int',
    min: 10,
  },
  {
    path: 'notifications.backoffCapMs',
    env: 'AMBIENT_NOTIFICATION_BACKOFF_CAP_MS',
    kind: 'int',
    min: 10,
  },
  {
    path: 'notifications.maxAttempts',
    env: 'AMBIENT_NOTIFICATION_MAX_ATTEMPTS',
    kind: 'int',
    min: 1,
    max: 30,
  },
  {
    path: 'notifications.timeoutMs',
    env: 'AMBIENT_NOTIFICATION_TIMEOUT_MS',
    kind: 'int',
    min: 100,
  },
  {
    path: 'notifications.sweepIntervalMs',
    env: 'AMBIENT_NOTIFICATION_SWEEP_INTERVAL_MS',
    kind: 'int',
    min: 50,
  },
  {
    path: 'notifications.sweepGraceMs',
    env: 'AMBIENT_NOTIFICATION_SWEEP_GRACE_MS',
    kind: 'int',
    min: 0,
  },
  {
    path: 'notifications.concurrency',
    env: 'AMBIENT_NOTIFICATION_CONCURRENCY',
    kind: 'int',
    min: 1,
  },
  {
    path: 'notifications.logRetentionDays',
    env: 'AMBIENT_NOTIFICATION_LOG_RETENTION_DAYS',
    kind: 'int',
    min: 1,
  },
  {
    path: 'factories.pollIntervalMs',
    env: 'AMBIENT_FACTORY_POLL_INTERVAL_MS',
    kind: 'int',
    min: 50,
  },
  {
    path: 'factories.repositoryProtocols',
    env: 'AMBIENT_FACTORY_REPOSITORY_PROTOCOLS',
    kind: 'string',
  },
  { path: 'egress.allow', env: 'AMBIENT_EGRESS_ALLOW', kind: 'string', optional: true },
  {
    path: 'egress.upstreamCaFile',
    env: 'AMBIENT_EGRESS_UPSTREAM_CA',
    kind: 'string',
    optional: true,
  },
  {
    path: 'selfHosted.claimTimeoutMs',
    env: 'AMBIENT_SELF_HOSTED_CLAIM_TIMEOUT_MS',
    kind: 'int',
    min: 100,
  },
  {
    path: 'selfHosted.readTimeoutMs',
    env: 'AMBIENT_SELF_HOSTED_READ_TIMEOUT_MS',
    kind: 'int',
    min: 1000,
  },
  { path: 'environments.gitUrlBase', env: 'AMBIENT_GIT_URL_BASE', kind: 'string' },
  {
    path: 'environments.setupTimeoutSeconds',
    env: 'AMBIENT_SETUP_TIMEOUT_SECONDS',
    kind: 'int',
    min: 1,
  },
  {
    path: 'environments.retentionSweepIntervalMs',
    env: 'AMBIENT_RETENTION_SWEEP_INTERVAL_MS',
    kind: 'int',
    min: 50,
  },
  {
    path: 'environments.orphanSweepIntervalMs',
    env: 'AMBIENT_ORPHAN_SWEEP_INTERVAL_MS',
    kind: 'int',
    min: 50,
  },
  { path: 'environments.snapshots.enabled', env: 'AMBIENT_ENVIRONMENT_SNAPSHOTS', kind: 'bool' },
  {
    path: 'environments.snapshots.maxBytesPerTeam',
    env: 'AMBIENT_SNAPSHOT_MAX_BYTES_PER_TEAM',
    kind: 'int',
    min: 0,
  },
  {
    path: 'environments.snapshots.maxAgeHours',
    env: 'AMBIENT_SNAPSHOT_MAX_AGE_HOURS',
    kind: 'number',
    min: 0.001,
  },
  {
    path: 'sandbox.backend',
    env: 'AMBIENT_SANDBOX',
    kind: 'string',
  },
  {
    path: 'sandbox.network',
    env: 'AMBIENT_SANDBOX_NETWORK',
    kind: 'string',
    oneOf: ['none', 'egress'],
  },
  { path: 'sandbox.memoryMb', env: 'AMBIENT_SANDBOX_MEMORY_MB', kind: 'int', min: 16 },
  { path: 'sandbox.pids', env: 'AMBIENT_SANDBOX_PIDS', kind: 'int', min: 8 },
  { path: 'sandbox.cpus', env: 'AMBIENT_SANDBOX_CPUS', kind: 'number', min: 0.1 },
  { path: 'sandbox.maxMemoryMb', env: 'AMBIENT_SANDBOX_MAX_MEMORY_MB', kind: 'int', min: 16 },
  { path: 'sandbox.maxPids', env: 'AMBIENT_SANDBOX_MAX_PIDS', kind: 'int', min: 8 },
  { path: 'sandbox.maxCpus', env: 'AMBIENT_SANDBOX_MAX_CPUS', kind: 'number', min: 0.1 },
  {
    path: 'sandbox.readonlyPaths',
    env: 'AMBIENT_SANDBOX_READONLY_PATHS',
    kind: 'string',
    optional: true,
  },
  { path: 'sandbox.docker.defaultImage', env: 'AMBIENT_DOCKER_IMAGE', kind: 'string' },
  { path: 'sandbox.docker.images', env: DOCKER_IMAGES_SETTING, kind: 'string', optional: true },
  { path: 'sandbox.docker.user', env: 'AMBIENT_DOCKER_USER', kind: 'string' },
  {
    path: 'sandbox.docker.runtime',
    env: 'AMBIENT_DOCKER_RUNTIME',
    kind: 'string',
    optional: true,
  },
  { path: 'sandbox.docker.poolSize', env: 'AMBIENT_DOCKER_POOL_SIZE', kind: 'int', min: 0 },
  { path: 'sandbox.docker.poolMax', env: 'AMBIENT_DOCKER_POOL_MAX', kind: 'int', min: 0 },
  { path: 'sandbox.docker.launcher', env: 'AMBIENT_DOCKER_LAUNCHER', kind: 'bool' },
  { path: 'skills.cacheTtlSeconds', env: 'AMBIENT_SKILLS_CACHE_TTL_SECONDS', kind: 'int', min: 0 },
  {
    path: 'idempotency.ttlHours',
    env: 'AMBIENT_IDEMPOTENCY_TTL_HOURS',
    kind: 'number',
    min: 0.0001,
  },
  { path: 'audit.retentionDays', env: 'AMBIENT_AUDIT_RETENTION_DAYS', kind: 'int', min: 1 },
  { path: 'signIn.oidcIssuer', env: 'AMBIENT_OIDC_ISSUER', kind: 'url', optional: true },
  { path: 'signIn.oidcClientId', env: 'AMBIENT_OIDC_CLIENT_ID', kind: 'string', optional: true },
  {
    path: 'signIn.oidcClientSecret',
    env: 'AMBIENT_OIDC_CLIENT_SECRET',
    kind: 'string',
    optional: true,
  },
  { path: 'signIn.oidcRedirectUrl', env: 'AMBIENT_OIDC_REDIRECT_URL', kind: 'url', optional: true },
  { path: 'signIn.oidcScopes', env: 'AMBIENT_OIDC_SCOPES', kind: 'string' },
  { path: 'signIn.oidcRoleClaim', env: 'AMBIENT_OIDC_ROLE_CLAIM', kind: 'string' },
  {
    path: 'signIn.oidcRoleMapping',
    env: 'AMBIENT_OIDC_ROLE_MAPPING',
    kind: 'string',
    optional: true,
  },
  {
    path: 'signIn.sessionTtlHours',
    env: 'AMBIENT_SESSION_TTL_HOURS',
    kind: 'number',
    min: 0.01,
    max: 720,
  },
  {
    path: 'log.format',
    env: 'AMBIENT_LOG_FORMAT',
    kind: 'string',
    oneOf: LOG_FORMATS,
    optional: true,
  },
  { path: 'log.level', env: 'AMBIENT_LOG_LEVEL', kind: 'string', oneOf: LOG_LEVELS },
  {
    path: 'metrics.port',
    env: 'AMBIENT_METRICS_PORT',
    kind: 'int',
    min: 0,
    max: 65535,
    allowOff: true,
  },
  { path: 'metrics.host', env: 'AMBIENT_METRICS_HOST', kind: 'string' },
  { path: 'extensions', env: 'AMBIENT_EXTENSIONS', kind: 'string', optional: true },
];

function getPath(tree: Record<string, unknown>, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], tree);
}

function setPath(tree: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = tree;
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
}

function coerce(setting: Setting, raw: unknown, source: string): unknown {
  const fail = (why: string): never => {
    throw new ConfigError(`${source}: ${why} (got ${JSON.stringify(raw)})`);
  };
  if (setting.allowOff && raw === 'off') return null;
  switch (setting.kind) {
    case 'string':
      if (typeof raw !== 'string' || raw.trim() === '') fail('must be a non-empty string');
      if (setting.oneOf && !setting.oneOf.includes(raw as string)) {
        fail(`must be one of ${setting.oneOf.join(', ')}`);
      }
      return raw;
    case 'url': {
      if (typeof raw !== 'string') return fail('must be a URL');
      try {
        new URL(raw);
      } catch {
        fail('must be a valid URL');
      }
      return raw;
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === '1' || raw === 'on') return true;
      if (raw === 'false' || raw === '0' || raw === 'off') return false;
      return fail('must be true or false (or on / off)');
    }
    case 'int':
    case 'number': {
      const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
      if (!Number.isFinite(n) || String(raw).trim() === '') {
        fail(setting.allowOff ? 'must be a number or off' : 'must be a number');
      }
      if (setting.kind === 'int' && !Number.isInteger(n)) fail('must be an integer');
      if (setting.min !== undefined && n < setting.min) fail(`must be at least ${setting.min}`);
      if (setting.max !== undefined && n > setting.max) fail(`must be at most ${setting.max}`);
      return n;
    }
    case 'roles': {
      const list = Array.isArray(raw) ? raw : String(raw).split(',');
      const roles = list.map((r) => String(r).trim()).filter(Boolean);
      if (roles.length === 0) fail(`must name at least one of ${ROLES.join(', ')}`);
      for (const role of roles) {
        if (!(ROLES as readonly string[]).includes(role)) {
          fail(`unknown role "${role}"; expected any of ${ROLES.join(', ')}`);
        }
      }
      return [...new Set(roles)];
    }
  }
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

/**
 * SSO needs its client id and a role mapping that reads (a user mapped to no team is refused, so
 * an empty mapping would refuse everyone); the redirect URL defaults to the public URL's callback.
 */
function checkSignInSettings(config: AppConfig): void {
  const s = config.signIn;
  if (!s.oidcIssuer) {
    const stray = s.oidcClientId
      ? 'AMBIENT_OIDC_CLIENT_ID'
      : s.oidcRoleMapping
        ? 'AMBIENT_OIDC_ROLE_MAPPING'
        : null;
    if (stray) throw new ConfigError(`${stray}: set only beside AMBIENT_OIDC_ISSUER`);
    return;
  }
  if (!s.oidcClientId)
    throw new ConfigError('AMBIENT_OIDC_CLIENT_ID: missing (AMBIENT_OIDC_ISSUER is set)');
  if (!s.oidcRoleMapping) {
    throw new ConfigError('AMBIENT_OIDC_ROLE_MAPPING: missing (AMBIENT_OIDC_ISSUER is set)');
  }
  try {
    parseRoleMapping(s.oidcRoleMapping);
  } catch (err) {
    throw new ConfigError(`AMBIENT_OIDC_ROLE_MAPPING: ${(err as Error).message}`);
  }
  if (!s.oidcScopes.split(/\s+/).includes('openid')) {
    throw new ConfigError(`AMBIENT_OIDC_SCOPES: must include openid (got "${s.oidcScopes}")`);
  }
  const issuer = new URL(s.oidcIssuer);
  if (issuer.protocol !== 'https:' && !/^(localhost|127\.[\d.]+|\[::1\])$/.test(issuer.hostname)) {
    throw new ConfigError(
      `AMBIENT_OIDC_ISSUER: must be https (plain http only on this machine; got "${s.oidcIssuer}")`,
    );
  }
  s.oidcRedirectUrl ??= oidcCallbackUrl(config.server.publicUrl);
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

function checkSandboxSettings(sandbox: SandboxSettings): void {
  sandbox.readonlyPaths ??= '';
  const pairs = [
    [
      'AMBIENT_SANDBOX_MEMORY_MB',
      sandbox.memoryMb,
      'AMBIENT_SANDBOX_MAX_MEMORY_MB',
      sandbox.maxMemoryMb,
    ],
    ['AMBIENT_SANDBOX_PIDS', sandbox.pids, 'AMBIENT_SANDBOX_MAX_PIDS', sandbox.maxPids],
    ['AMBIENT_SANDBOX_CPUS', sandbox.cpus, 'AMBIENT_SANDBOX_MAX_CPUS', sandbox.maxCpus],
  ] as const;
  for (const [name, value, maxName, max] of pairs) {
    if (value > max) throw new ConfigError(`${name}: must be at most ${maxName} (${max})`);
  }
  if (/^(0|root)(:|$)/.test(sandbox.docker.user)) {
    throw new ConfigError('AMBIENT_DOCKER_USER: must not be root (use e.g. 1000:1000)');
  }
  try {
    parseDockerImages(sandbox.docker.images, sandbox.docker.defaultImage);
  } catch (err) {
    throw new ConfigError(`${DOCKER_IMAGES_SETTING}: ${(err as Error).message}`);
  }
}

function checkS3Settings(blobs: AppConfig['blobs']): void {
  const { s3 } = blobs;
  if (blobs.driver === 's3' && !s3.bucket) {
    throw new ConfigError('AMBIENT_S3_BUCKET: missing (required with AMBIENT_BLOB_DRIVER=s3)');
  }
  if (Boolean(s3.accessKeyId) !== Boolean(s3.secretAccessKey)) {
    throw new ConfigError(
      'AMBIENT_S3_ACCESS_KEY_ID, AMBIENT_S3_SECRET_ACCESS_KEY: set both or neither',
    );
  }
  if (s3.prefix !== undefined && !/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(s3.prefix)) {
    throw new ConfigError(
      'AMBIENT_S3_PREFIX: letters, digits, ".", "_", "-" in "/"-separated parts, no leading or trailing "/"',
    );
  }
}

/** The key that signed every download URL before keys were generated; refused so it stays dead. */
const RETIRED_URL_SIGNING_KEY = 'ambient-dev-url-signing-key';

export function checkUrlSigningKey(key: string, name = 'AMBIENT_URL_SIGNING_KEY'): void {
  if (key.trim() === RETIRED_URL_SIGNING_KEY) {
    throw new ConfigError(
      `${name}: is the old well-known development key; set a random one (\`openssl rand -base64 32\`) or unset it to use a generated key file`,
    );
  }
  if (key.trim().length < 16) {
    throw new ConfigError(
      `${name}: must be at least 16 characters (e.g. \`openssl rand -base64 32\`)`,
    );
  }
}

function previousSecretsKeys(text: string | undefined, config: AppConfig): Buffer[] {
  const name = 'AMBIENT_SECRETS_PREVIOUS_KEYS';
  const parts = (text ?? '').split(',').filter((part) => part.trim() !== '');
  if (parts.length && !config.secretsKey) {
    throw new ConfigError(`${name}: set only beside AMBIENT_SECRETS_KEY (the current key)`);
  }
  const keys = parts.map((part) => parseSecretsKey(part, name));
  if (keys.some((key) => key.equals(config.secretsKey!))) {
    throw new ConfigError(`${name}: must not contain the current AMBIENT_SECRETS_KEY`);
  }
  return keys;
}

/** 32 bytes as 64 hex digits or base64 (either alphabet, padding optional). */
export function parseSecretsKey(text: string, name: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
      ? Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
      : null;
  if (!key || key.length !== 32) {
    throw new ConfigError(
      `${name}: must be 32 bytes, as 64 hex digits or base64 (e.g. \`openssl rand -base64 32\`)`,
    );
  }
  return key;
}

export const APP_CONFIG = Symbol('APP_CONFIG');
