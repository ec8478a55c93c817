import { mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import Redis from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { getDataSourceToken } from '@nestjs/typeorm';
import { AppConfig, loadConfig, Role } from '../../src/config/app-config';
import { batchedLogDestination } from '../../src/common/logging/root-logger';
import { AmbientProcess, startAmbient, StartOptions } from '../../src/bootstrap/start';
import { deploymentName } from '../../src/modules/workers/sandbox/sandbox.service';
import { createMigratedDatabase } from './database-template';
import { removeSnapshotImagesOf } from './docker-sandbox';
import { TEST_SECRETS_KEY } from './test-keys';

export const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEST_API_KEY = 'amb_test_bootstrap_key_0123456789';
export { TEST_SECRETS_KEY };
/** AMBIENT_URL_SIGNING_KEY of every test process (so none writes a key file into the checkout). */
export const TEST_URL_SIGNING_KEY = 'test-url-signing-key-0123456789';

/** One database and Redis prefix per test file (and process), so e2e files run in parallel. */
export function isolatedNames(label: string): { database: string; redisPrefix: string } {
  const slug = label.replace(/[^A-Za-z0-9]/g, '_').slice(0, 30);
  const suffix = `${process.pid}_${Date.now().toString(36)}`;
  return { database: `amb_t_${slug}_${suffix}`, redisPrefix: `amb_t:${slug}:${suffix}` };
}

/** A model catalogue whose provider is the fake OpenAI-compatible server of the test. */
export function writeTestModelsFile(modelServerUrl: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'ambient-models-'));
  const file = join(dir, 'models.yaml');
  writeFileSync(
    file,
    [
      'default_model_id: fake-model',
      'providers:',
      '  keyless:',
      '    kind: UNKNOWN',
      `    base_url: ${modelServerUrl}`,
      // The same fake server speaks Anthropic's Messages API too (POST /v1/messages).
      '  anthropic-native:',
      '    kind: ANTHROPIC',
      `    base_url: ${modelServerUrl}`,
      '  missing-key:',
      '    kind: ANTHROPIC',
      '    base_url: http://127.0.0.1:9/v1',
      '    api_key_env: AMBIENT_TEST_NEVER_SET_KEY',
      'models:',
      '  - id: fake-model',
      '    display_name: Fake model',
      '    provider: keyless',
      '    vision_supported: false',
      '    input_cost_per_million_usd: 1',
      '    output_cost_per_million_usd: 2',
      '  - id: fake-claude',
      '    display_name: Fake model over the Messages API',
      '    provider: anthropic-native',
      '    max_output_tokens: 512',
      '    input_cost_per_million_usd: 3',
      '    output_cost_per_million_usd: 15',
      '  - id: locked-model',
      '    display_name: Model without a key',
      '    provider: missing-key',
      '',
    ].join('\n'),
  );
  return file;
}

export interface TestEnvironment {
  label: string;
  /** The database's name (created, migrated, by the first app started). */
  database: string;
  databaseUrl: string;
  redisPrefix: string;
  modelsFile: string;
  workspaceRoot: string;
  /** Environment for a child process running Ambient against the same database and Redis. */
  childEnv(extra?: Record<string, string>): NodeJS.ProcessEnv;
  config(roles: Role[], overrides?: Record<string, unknown>): AppConfig;
  destroy(): Promise<void>;
}

/**
 * A lease a live worker renews on a busy machine: under CPU load renewals were seen 1.1–1.4 s
 * apart, and an execution stops itself when it cannot renew for 2/3 of its lease (fencing).
 */
const DEFAULT_TEST_LEASE_MS = 10_000;
/** For the specs that wait for a lapsed lease (a killed or frozen worker taken over). */
export const TAKEOVER_LEASE_MS = 1500;
/**
 * For the specs whose runs pass through live workers after a takeover and need the takeover to
 * happen, not to be quick: on a loaded machine the 1.5 s lease lapsed under live workers, and the
 * runs spent their attempts on takeovers the test did not cause (CI runs saw it in two specs).
 */
export const LOADED_TAKEOVER_LEASE_MS = TAKEOVER_LEASE_MS * 3;

const FAST_RUN_SETTINGS = {
  'runs.dispatchSweepIntervalMs': 200,
  'runs.dispatchGraceMs': 300,
  'runs.leaseMs': DEFAULT_TEST_LEASE_MS,
  'runs.workerConcurrency': 4,
  'server.shutdownTimeoutMs': 3000,
};

/**
 * Every e2e run executes in a bubblewrap sandbox (the light backend; test/sandbox-*.e2e-spec.ts
 * cover docker too), which must see the repository read-only for the test fixtures (fake vendor
 * CLIs, the MCP echo server) and the node_modules they load.
 */
export const REPO_ROOT = resolve(__dirname, '../..');
const TEST_SANDBOX_SETTINGS = {
  'sandbox.backend': 'bubblewrap',
  'sandbox.readonlyPaths': REPO_ROOT,
};

export interface TestEnvironmentOptions {
  /** The run lease of every app and child process (default 10 s; TAKEOVER_LEASE_MS to await takeovers). */
  leaseMs?: number;
  /** MySQL's Unix socket, for DATABASE_URL's `?socket=` (benchmarks of a same-host deployment). */
  databaseSocket?: string;
}

export function createTestEnvironment(
  label: string,
  modelServerUrl: string,
  options: TestEnvironmentOptions = {},
): TestEnvironment {
  const leaseMs = options.leaseMs ?? DEFAULT_TEST_LEASE_MS;
  const { database, redisPrefix } = isolatedNames(label);
  const databaseUrl =
    `${MYSQL_URL}/${database}` +
    (options.databaseSocket ? `?socket=${encodeURIComponent(options.databaseSocket)}` : '');
  const modelsFile = writeTestModelsFile(modelServerUrl);
  const workspaceRoot = mkdtempSync(join(tmpdir(), 'ambient-ws-'));
  const settings: Record<string, unknown> = {
    'database.url': databaseUrl,
    'redis.url': REDIS_URL,
    'redis.prefix': redisPrefix,
    'models.file': modelsFile,
    'runs.workspaceRoot': workspaceRoot,
    'blobs.root': join(workspaceRoot, '.blobs'),
    'blobs.signingKey': TEST_URL_SIGNING_KEY,
    'server.port': 0,
    'ingress.port': 0,
    'ingress.host': '127.0.0.1',
    'server.host': '127.0.0.1',
    // A free port each: parallel apps on one machine never collide on the default 9464.
    'metrics.port': 0,
    // Errors only, unless a benchmark asks for the production level (testLogging()).
    'log.level': process.env.AMBIENT_TEST_LOG_LEVEL ?? 'error',
    ...TEST_SANDBOX_SETTINGS,
    ...FAST_RUN_SETTINGS,
    'runs.leaseMs': leaseMs,
  };
  return {
    label,
    database,
    databaseUrl,
    redisPrefix,
    modelsFile,
    workspaceRoot,
    config: (roles, overrides = {}) =>
      loadConfig(
        { AMBIENT_CONFIG_FILE: 'config/default.yaml' },
        {
          ...settings,
          roles,
          bootstrapApiKey: TEST_API_KEY,
          secretsKey: TEST_SECRETS_KEY,
          ...overrides,
        },
      ),
    childEnv: (extra = {}) => ({
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      AMBIENT_REDIS_PREFIX: redisPrefix,
      AMBIENT_MODELS_FILE: modelsFile,
      AMBIENT_WORKSPACE_ROOT: workspaceRoot,
      AMBIENT_BLOB_ROOT: join(workspaceRoot, '.blobs'),
      AMBIENT_DISPATCH_SWEEP_INTERVAL_MS: String(FAST_RUN_SETTINGS['runs.dispatchSweepIntervalMs']),
      AMBIENT_DISPATCH_GRACE_MS: String(FAST_RUN_SETTINGS['runs.dispatchGraceMs']),
      AMBIENT_RUN_LEASE_MS: String(leaseMs),
      AMBIENT_SHUTDOWN_TIMEOUT_MS: String(FAST_RUN_SETTINGS['server.shutdownTimeoutMs']),
      AMBIENT_SECRETS_KEY: TEST_SECRETS_KEY,
      AMBIENT_URL_SIGNING_KEY: TEST_URL_SIGNING_KEY,
      AMBIENT_INGRESS_PORT: '0',
      AMBIENT_METRICS_PORT: '0',
      AMBIENT_SANDBOX: TEST_SANDBOX_SETTINGS['sandbox.backend'],
      AMBIENT_SANDBOX_READONLY_PATHS: REPO_ROOT,
      ...extra,
    }),
    destroy: async () => {
      const connection = await createConnection(MYSQL_URL);
      await connection.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await connection.end();
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${redisPrefix}:*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
      // The environment's files and snapshot images go with it: a CI machine runs hundreds.
      await removeSnapshotImagesOf(
        deploymentName({
          database: { url: databaseUrl },
          redis: { prefix: redisPrefix },
        } as AppConfig),
      );
      await rm(dirname(modelsFile), { recursive: true, force: true });
      await rm(workspaceRoot, { recursive: true, force: true });
    },
  };
}

export interface TestApp {
  ambient: AmbientProcess;
  baseUrl: string;
  /** `http://127.0.0.1:<port>` of the webhook ingress, when the roles include it. */
  ingressUrl: string;
  apiKey: string;
  dataSource: DataSource;
  close(): Promise<void>;
}

/**
 * In-process apps log JSON to stdout, or to AMBIENT_TEST_LOG_FILE (what a benchmark measuring
 * logging on sets, so its report stays readable), written in batches as production writes stdout.
 */
function testLogging(): StartOptions {
  const file = process.env.AMBIENT_TEST_LOG_FILE;
  return file ? { logDestination: batchedLogDestination(file) } : {};
}

/**
 * Beyond this a start-up or a close is worth a line in the CI log: hooks time out at 120 s
 * (e2e-setup.ts).
 */
const SLOW_STEP_MS = 20_000;

/**
 * Closes the app; one taking longer than SLOW_STEP_MS says, every time that passes again, what
 * the process still has open (sockets, child processes, timers), so a hook timeout in CI shows
 * what the close was waiting for.
 */
async function closeReportingSlow(label: string, ambient: { close(): Promise<void> }) {
  const startedAt = Date.now();
  const report = setInterval(() => {
    const open = new Map<string, number>();
    for (const kind of process.getActiveResourcesInfo()) open.set(kind, (open.get(kind) ?? 0) + 1);
    const summary = [...open].map(([kind, n]) => `${kind} ×${n}`).join(', ');
    process.stderr.write(
      `closeTestApp(${label}): ${Date.now() - startedAt} ms, open: ${summary}\n`,
    );
  }, SLOW_STEP_MS);
  try {
    await ambient.close();
  } finally {
    clearInterval(report);
  }
}

/** Says where a slow start-up spent its time, so a hook timeout in CI can be told apart. */
function reportSlowStart(label: string, startedAt: number, copiedAt: number) {
  const took = Date.now() - startedAt;
  if (took < SLOW_STEP_MS) return;
  process.stderr.write(
    `startTestApp(${label}): ${took} ms (database ${copiedAt - startedAt} ms, app ` +
      `${Date.now() - copiedAt} ms) at load ${loadavg()[0].toFixed(1)}\n`,
  );
}

export async function startTestApp(
  environment: TestEnvironment,
  roles: Role[] = ['api', 'worker'],
  overrides: Record<string, unknown> = {},
  start: StartOptions = testLogging(),
): Promise<TestApp> {
  const startedAt = Date.now();
  // A copy of the migrated template: the app's own start-up then finds no migration pending.
  await createMigratedDatabase(MYSQL_URL, environment.database, TEST_SECRETS_KEY);
  const copiedAt = Date.now();
  const ambient = await startAmbient(environment.config(roles, overrides), start);
  reportSlowStart(environment.label, startedAt, copiedAt);
  return {
    ambient,
    baseUrl: ambient.apiUrl ?? '',
    ingressUrl: ambient.ingressUrl ?? '',
    apiKey: TEST_API_KEY,
    dataSource: ambient.app.get<DataSource>(getDataSourceToken()),
    close: () => closeReportingSlow(environment.label, ambient),
  };
}
