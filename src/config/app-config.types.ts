import type { BlobSettings } from './blob-settings';
import type { SandboxSettings } from './sandbox-settings';
import type { Role } from './setting-values';
import type { LogFormat, LogLevelName } from './settings-table';
import type { SignInSettings } from './sign-in-settings';

/** Every setting, validated (loadConfig in app-config.ts); each concern's slice types live beside it. */
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
   * `cacheTtlMs`: the longest an in-process cache (API keys, limits, webhooks, identity settings,
   * notification endpoints) serves an entry; changes are broadcast on Redis at once, so it bounds
   * only a lost broadcast. 0 = no caching.
   * `cacheAckTimeoutMs`: the longest a change waits for every replica to acknowledge that it
   * dropped its entries (0 = not waited for).
   */
  redis: { url: string; prefix: string; cacheTtlMs: number; cacheAckTimeoutMs: number };
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
    /**
     * AMBIENT_RUN_CONTENT_RETENTION_DAYS: a run's timeline, conversation, follow-ups, attachments and
     * artifacts are deleted this many days after it ended; the run stays. 0: kept until deleted by hand.
     */
    contentRetentionDays: number;
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
  blobs: BlobSettings;
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
