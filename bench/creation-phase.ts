import type { FakeModelServer } from '../test/fixtures/fake-model-server';
import { createTestEnvironment, startTestApp, TestApp } from '../test/support/test-app';
import { BareApp, startBareApp } from './bare-app';
import { benchDatabaseSocket, describeBenchDatabase } from './database-socket';
import { LoadSpec, runLoad } from './load-generator';
import { median as medianOf, percentile } from './stats';
import { mainThreadCpuMs, servicesAndIdleMs } from './thread-cpu';

export const CREATION_CONCURRENCY = 32;
const ROUNDS = 3;
const WARMUP_MS = 2500;
const MEASURE_MS = 4000;
const PROMPT = 'Summarise the open issues of the repository and suggest which to fix first';

export interface ThroughputSample {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU of the server's thread per request (µs): robust to other processes taking the CPU. */
  cpuUsPerRequest: number | null;
  /** CPU of MariaDB and Redis per request (µs): the share of the cores the bare endpoint leaves free. */
  servicesCpuUsPerRequest: number | null;
  /** Cores left idle on the machine while the round was measured. */
  idleCores: number | null;
  errors: number;
  firstError: string | null;
}

export interface CreationResult {
  bare: ThroughputSample[];
  ambient: ThroughputSample[];
  runsCreated: number;
  settings: string;
}

async function measure(spec: LoadSpec): Promise<ThroughputSample> {
  await runLoad({ ...spec, durationMs: WARMUP_MS });
  const cpuBefore = mainThreadCpuMs();
  const servicesBefore = servicesAndIdleMs();
  const result = await runLoad({ ...spec, durationMs: MEASURE_MS });
  const cpuAfter = mainThreadCpuMs();
  const servicesAfter = servicesAndIdleMs();
  const requests = result.completed + result.errors;
  const services =
    servicesBefore && servicesAfter && requests > 0
      ? {
          usPerRequest: ((servicesAfter.servicesMs - servicesBefore.servicesMs) * 1000) / requests,
          idleCores: (servicesAfter.idleMs - servicesBefore.idleMs) / result.elapsedMs,
        }
      : null;
  return {
    requestsPerSecond: result.requestsPerSecond,
    p50Ms: percentile(result.latenciesMs, 50),
    p99Ms: percentile(result.latenciesMs, 99),
    cpuUsPerRequest:
      cpuBefore === null || cpuAfter === null || requests === 0
        ? null
        : ((cpuAfter - cpuBefore) * 1000) / requests,
    servicesCpuUsPerRequest: services?.usPerRequest ?? null,
    idleCores: services?.idleCores ?? null,
    errors: result.errors,
    firstError: result.firstError,
  };
}

/**
 * POST /agent/runs on an API-only Ambient (no worker competing for the CPU; the runs stay
 * QUEUED with their Bull jobs) against a bare Nest/Express POST route, alternating the two in
 * rounds so that both see the same machine.
 */
export async function runCreationPhase(model: FakeModelServer): Promise<CreationResult> {
  const databaseSocket = benchDatabaseSocket();
  const env = createTestEnvironment('bench_create', model.url, { databaseSocket });
  let app: TestApp | undefined;
  let bare: BareApp | undefined;
  try {
    app = await startTestApp(env, ['api']);
    bare = await startBareApp();
    const common = {
      method: 'POST' as const,
      body: JSON.stringify({ prompt: PROMPT }),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${app.apiKey}` },
      concurrency: CREATION_CONCURRENCY,
    };
    const result: CreationResult = {
      bare: [],
      ambient: [],
      runsCreated: 0,
      settings:
        `concurrency ${CREATION_CONCURRENCY}, keep-alive, ${ROUNDS} alternating rounds of ` +
        `${WARMUP_MS / 1000} s warm-up + ${MEASURE_MS / 1000} s measured each; ` +
        describeBenchDatabase(databaseSocket),
    };
    for (let round = 0; round < ROUNDS; round++) {
      result.bare.push(await measure({ ...common, url: bare.url }));
      result.ambient.push(await measure({ ...common, url: `${app.baseUrl}/agent/runs` }));
    }
    const [row] = (await app.dataSource.query('SELECT COUNT(*) AS c FROM runs')) as { c: string }[];
    result.runsCreated = Number(row.c);
    return result;
  } finally {
    await bare?.close();
    await app?.close();
    await env.destroy();
  }
}

/** The median over rounds: a round that another process on the machine disturbed moves it least. */
export function median(values: (number | null)[]): number {
  return medianOf(values.filter((v): v is number => v !== null));
}

/** Per round, ambient over bare: the two ran back to back, so each ratio compares like with like. */
export function roundRatios(result: CreationResult, pick: (s: ThroughputSample) => number | null) {
  return result.ambient.map((a, i) => {
    const [x, y] = [pick(a), pick(result.bare[i])];
    return x === null || y === null ? null : x / y;
  });
}
