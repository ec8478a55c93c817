import type Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { newUid } from '../src/common/ids';
import { IngressLoadResult, ingressLoad } from './ingress-load';
import { BenchWebhook, deliveryRecipe, seedWebhooks } from './ingress-seed';
import type { VariantsRecipe } from './load-generator';
import { median } from './stats';

const ROUNDS = 3;
const TIMES = { warmupMs: 1000, measureMs: 3000 };
const CONCURRENCY = 32;
const UNKNOWN_IDS = 2000;
const PER_ROUND = 30_000;

export const REFUSED_FLOODS_SETTINGS = `refused floods: ${ROUNDS} rounds of ${TIMES.warmupMs / 1000} s warm-up + ${TIMES.measureMs / 1000} s measured per flood, each beside the bare endpoint's (bare first in the first and third rounds, after the flood in the second), closed loop, concurrency ${CONCURRENCY}; one token webhook over its budget; ${UNKNOWN_IDS} well-formed ids of no webhook`;

/** One kind of refused delivery, and the status its answers should have. */
interface Flood {
  name: string;
  status: number;
  recipe: (offset: number) => VariantsRecipe;
}

export interface FloodResult {
  name: string;
  status: number;
  /** Per round: the flood's answers/s (every status) over the bare endpoint's beside it. */
  ratios: number[];
  answeredPerSecond: number[];
  bareAnsweredPerSecond: number[];
  /** Medians of the rounds, µs per answer: the server's thread, the flood's and bare's. */
  serverUs: number;
  bareServerUs: number;
  /**
   * MariaDB's and Redis's CPU per answer above what they spent meanwhile without any request
   * (the bare round's: it calls neither), medians of the rounds, µs; negative when the stores'
   * background (pages of earlier rounds still being flushed) fell between the two.
   */
  databaseUs: number;
  redisUs: number;
  /** Answers with another status (a 202 as the budget's window moves), and requests unanswered. */
  otherStatuses: Record<number, number>;
  unanswered: number;
  /** The bare rounds' non-2xx answers and unanswered requests (a failing baseline shows here). */
  bareErrors: number;
}

/** The stores' CPU of `round` above `background`'s rate over the same time, per answer (µs). */
function aboveBackground(
  round: IngressLoadResult,
  background: IngressLoadResult,
  store: 'databaseMs' | 'redisMs',
): number {
  if (!round.stores || !background.stores || round.answered === 0) return NaN;
  const idleRate = background.stores[store] / background.stores.windowMs;
  const above = round.stores[store] - idleRate * round.stores.windowMs;
  return (above * 1000) / round.answered;
}

/**
 * What a flood of deliveries the ingress refuses costs it, beside the bare endpoint in the same
 * rounds: one webhook far over its per-minute budget (429; each hit still goes to Redis, in the
 * limiter's batched script calls) and well-formed ids of no webhook (404; each id is looked up in
 * MariaDB, in batched reads, as misses are not cached). A public ingress meets both: a sender
 * retrying in a loop, a scan of webhook URLs.
 */
export async function measureRefusedFloods(
  dataSource: DataSource,
  secretsKey: Buffer,
  ingressUrl: string,
  bareUrl: string,
  redis: Redis,
): Promise<FloodResult[]> {
  const [overBudget] = await seedWebhooks(dataSource, secretsKey, 1, 'token');
  const unknown: BenchWebhook[] = Array.from({ length: UNKNOWN_IDS }, () => ({
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
      name: 'ids of no webhook',
      status: 404,
      recipe: (offset) => deliveryRecipe(ingressUrl, unknown, PER_ROUND, offset),
    },
  ];
  const spec = { url: '', method: 'POST' as const, concurrency: CONCURRENCY };
  const rounds = floods.map(() => [] as { bare: IngressLoadResult; flood: IngressLoadResult }[]);
  let offset = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, flood] of floods.entries()) {
      // The same requests to the bare endpoint beside it: each round's ratio compares like with
      // like on a host whose speed drifts between rounds. The order alternates, so that a trend
      // (the stores' background dying away after the throughput rounds) favours neither side.
      const bareRound = () =>
        ingressLoad(
          spec,
          () => deliveryRecipe(ingressUrl, [overBudget], PER_ROUND, (offset += PER_ROUND), bareUrl),
          redis,
          TIMES,
        );
      const floodRound = () =>
        ingressLoad(spec, () => flood.recipe((offset += PER_ROUND)), redis, TIMES);
      const bareFirst = round % 2 === 0;
      const first = await (bareFirst ? bareRound() : floodRound());
      const second = await (bareFirst ? floodRound() : bareRound());
      rounds[i].push(bareFirst ? { bare: first, flood: second } : { bare: second, flood: first });
    }
  }
  return floods.map((flood, i) => {
    const otherStatuses: Record<number, number> = {};
    let unanswered = 0;
    let bareErrors = 0;
    for (const { bare, flood: r } of rounds[i]) {
      bareErrors += bare.errors;
      for (const [status, n] of Object.entries(r.statuses)) {
        if (Number(status) !== flood.status) {
          otherStatuses[Number(status)] = (otherStatuses[Number(status)] ?? 0) + n;
        }
      }
      unanswered += r.unanswered;
    }
    return {
      name: flood.name,
      status: flood.status,
      ratios: rounds[i].map((r) => r.flood.answeredPerSecond / r.bare.answeredPerSecond),
      answeredPerSecond: rounds[i].map((r) => r.flood.answeredPerSecond),
      bareAnsweredPerSecond: rounds[i].map((r) => r.bare.answeredPerSecond),
      serverUs: median(rounds[i].map((r) => r.flood.cpuUs)),
      bareServerUs: median(rounds[i].map((r) => r.bare.cpuUs)),
      databaseUs: median(rounds[i].map((r) => aboveBackground(r.flood, r.bare, 'databaseMs'))),
      redisUs: median(rounds[i].map((r) => aboveBackground(r.flood, r.bare, 'redisMs'))),
      otherStatuses,
      unanswered,
      bareErrors,
    };
  });
}
