import type { DataSource } from 'typeorm';
import { newUid } from '../src/common/ids';
import { BenchWebhook, deliveryRecipe, seedWebhooks } from './ingress-seed';
import { runLoad, VariantsRecipe } from './load-generator';
import { percentile } from './stats';
import { watchStoresCpu } from './thread-cpu';

const ROUNDS = 2;
const WARMUP_MS = 1000;
const MEASURE_MS = 3000;
const CONCURRENCY = 32;
const PER_ROUND = 30_000;

/** One kind of refused delivery, and the status every answer to it must have. */
interface Flood {
  name: string;
  status: number;
  recipe: (offset: number) => VariantsRecipe;
}

export interface FloodResult {
  name: string;
  status: number;
  /** Answers per second (every status) in each round, and the bare endpoint's just before it. */
  answeredPerSecond: number[];
  bareRequestsPerSecond: number[];
  /** CPU per answer (µs), medians of the rounds: the server's thread, MariaDB, Redis. */
  serverUs: number;
  databaseUs: number;
  redisUs: number;
  /** Answers with another status than the flood's (a 202 would be a delivery let through). */
  otherStatuses: Record<number, number>;
}

async function measured(recipe: VariantsRecipe) {
  const spec = { url: '', method: 'POST' as const, concurrency: CONCURRENCY };
  await runLoad({ ...spec, durationMs: WARMUP_MS, variantsFrom: recipe });
  const stores = watchStoresCpu();
  const result = await runLoad({ ...spec, durationMs: MEASURE_MS, variantsFrom: recipe });
  const storesMs = stores();
  const answered = Object.values(result.statuses).reduce((sum, n) => sum + n, 0);
  const per = (ms: number | null | undefined) =>
    ms === null || ms === undefined || answered === 0 ? NaN : (ms * 1000) / answered;
  return {
    answeredPerSecond: (answered * 1000) / result.elapsedMs,
    serverUs: per(result.callerCpuMs),
    databaseUs: per(storesMs?.databaseMs),
    redisUs: per(storesMs?.redisMs),
    statuses: result.statuses,
  };
}

/**
 * What a flood of deliveries the ingress refuses costs it, beside the bare endpoint in the same
 * rounds: one webhook far over its per-minute budget (429), and ids of no webhook (404). A public
 * ingress meets both (a sender retrying in a loop, a scan of URLs); each should cost about what
 * answering at all costs, and neither a database row nor a Redis call of its own.
 */
export async function measureRefusedFloods(
  dataSource: DataSource,
  secretsKey: Buffer,
  ingressUrl: string,
  bareUrl: string,
): Promise<FloodResult[]> {
  const [overBudget] = await seedWebhooks(dataSource, secretsKey, 1, 'token');
  const unknown: BenchWebhook[] = Array.from({ length: 2000 }, () => ({
    uid: newUid(),
    mode: 'token',
  }));
  const floods: Flood[] = [
    {
      name: 'one webhook over its budget',
      status: 429,
      recipe: (offset) => deliveryRecipe(ingressUrl, [overBudget], PER_ROUND, offset),
    },
    {
      name: 'unknown webhook ids',
      status: 404,
      recipe: (offset) => deliveryRecipe(ingressUrl, unknown, PER_ROUND, offset),
    },
  ];
  const samples = floods.map(() => ({
    bare: [] as number[],
    answered: [] as number[],
    server: [] as number[],
    database: [] as number[],
    redis: [] as number[],
    other: {} as Record<number, number>,
  }));
  let offset = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, flood] of floods.entries()) {
      // The same requests to the bare endpoint just before: the host's drift between rounds
      // moves both sides of the ratio alike.
      const bare = await measured(
        deliveryRecipe(ingressUrl, [overBudget], PER_ROUND, (offset += PER_ROUND), bareUrl),
      );
      const refused = await measured(flood.recipe((offset += PER_ROUND)));
      const s = samples[i];
      s.bare.push(bare.answeredPerSecond);
      s.answered.push(refused.answeredPerSecond);
      s.server.push(refused.serverUs);
      s.database.push(refused.databaseUs);
      s.redis.push(refused.redisUs);
      for (const [status, n] of Object.entries(refused.statuses)) {
        if (Number(status) !== flood.status)
          s.other[Number(status)] = (s.other[Number(status)] ?? 0) + n;
      }
    }
  }
  const median = (xs: number[]) => percentile(xs, 50);
  return floods.map((flood, i) => ({
    name: flood.name,
    status: flood.status,
    answeredPerSecond: samples[i].answered,
    bareRequestsPerSecond: samples[i].bare,
    serverUs: median(samples[i].server),
    databaseUs: median(samples[i].database),
    redisUs: median(samples[i].redis),
    otherStatuses: samples[i].other,
  }));
}
