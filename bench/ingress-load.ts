import Redis from 'ioredis';
import { LoadSpec, runLoad, VariantsRecipe } from './load-generator';
import { percentile } from './stats';
import { watchStoresCpu } from './thread-cpu';

/** Commands Redis has processed since it started (every client's: the ingress's, Bull's). */
async function redisCommands(redis: Redis): Promise<number> {
  const stats = await redis.info('stats');
  return Number(/total_commands_processed:(\d+)/.exec(stats)?.[1] ?? NaN);
}

export interface IngressLoadTimes {
  warmupMs: number;
  measureMs: number;
}

/**
 * One closed-loop round of the ingress bench: `times.warmupMs` unmeasured, then `times.measureMs`
 * measured with fresh requests from `recipe`. Figures per request are per answer of any status
 * (and transport error); `rps` counts the 2xx answers only, `answeredPerSecond` every answer.
 */
export async function ingressLoad(
  spec: Omit<LoadSpec, 'durationMs'>,
  recipe: () => VariantsRecipe,
  redis: Redis,
  times: IngressLoadTimes,
) {
  await runLoad({ ...spec, durationMs: times.warmupMs, variantsFrom: recipe() });
  const stores = watchStoresCpu();
  const commandsBefore = await redisCommands(redis);
  const storesFrom = performance.now();
  const result = await runLoad({ ...spec, durationMs: times.measureMs, variantsFrom: recipe() });
  const storesMs = stores();
  const storesWindowMs = performance.now() - storesFrom;
  const commands = (await redisCommands(redis)) - commandsBefore - 1;
  const requests = result.completed + result.errors;
  const perRequest = (ms: number | null) =>
    ms === null || requests === 0 ? NaN : (ms * 1000) / requests;
  const { callerCpuMs, generatorCpuMs, processCpuMs } = result;
  const answered = Object.values(result.statuses).reduce((sum, n) => sum + n, 0);
  return {
    // CPU of the server's thread per request (µs): unlike req/s, robust to a busy machine.
    cpuUs: perRequest(callerCpuMs),
    // Where the rest of the machine's CPU per request went (µs); see machineSplit.
    split: {
      helpers: perRequest(
        processCpuMs === null || callerCpuMs === null || generatorCpuMs === null
          ? null
          : processCpuMs - callerCpuMs - generatorCpuMs,
      ),
      generator: perRequest(generatorCpuMs),
      database: perRequest(storesMs?.databaseMs ?? null),
      redis: perRequest(storesMs?.redisMs ?? null),
    },
    /** MariaDB's and Redis's CPU (ms) over the measured round, and that round's wall time. */
    stores: storesMs === null ? null : { ...storesMs, windowMs: storesWindowMs },
    rps: result.requestsPerSecond,
    answeredPerSecond: (answered * 1000) / result.elapsedMs,
    answered,
    statuses: result.statuses,
    /** Requests that got no answer (connection errors). */
    unanswered: result.unanswered,
    redisCommands: requests === 0 ? NaN : commands / requests,
    errors: result.errors,
    firstError: result.firstError,
    p50: percentile(result.latenciesMs, 50),
    p99: percentile(result.latenciesMs, 99),
  };
}

export type IngressLoadResult = Awaited<ReturnType<typeof ingressLoad>>;
