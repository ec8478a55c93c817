import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { startFakeModelServer } from '../test/fixtures/fake-model-server';
import { apiClient } from '../test/support/api-client';
import {
  createTestEnvironment,
  MYSQL_URL,
  REDIS_URL,
  startTestApp,
  TEST_SECRETS_KEY,
} from '../test/support/test-app';
import { benchDatabaseSocket, describeBenchDatabase } from './database-socket';
import { waitFor } from '../test/support/wait';
import {
  createFactory,
  CreatedWebhook,
  createWebhook,
  definitionFiles,
} from '../test/support/webhook-helpers';
import { startBareApp } from './bare-app';
import { ingressLoad } from './ingress-load';
import { deliveryRecipe, seedWebhooks } from './ingress-seed';
import { LoadSpec, runLoad, VariantsRecipe } from './load-generator';
import { databaseFacts, machineFacts } from './machine';
import { FloodResult, measureRefusedFloods, REFUSED_FLOODS_SETTINGS } from './refused-phase';
import { median, ms, percentile, table } from './stats';
import { watchNeighbourCpu } from './thread-cpu';
import { watchGcPauses } from './gc-pauses';

/**
 * `npm run bench:ingress`: accepted deliveries/s of the webhook ingress (1 KB bodies, token,
 * standard_webhooks and github auth, spread over enough webhooks to stay under the per-webhook
 * limit; github's unsigned `X-GitHub-Delivery` makes each delivery write its dedup key) beside
 * a bare Nest/Express endpoint answering 202; latency at 500 deliveries/s; what floods of refused
 * deliveries cost (refused-phase.ts); and how long an accepted delivery takes to become a QUEUED
 * run. A benchmark, not a test: it always exits 0.
 */
const TARGETS = { ratio: 0.5, p99AtRateMs: 20, toQueuedP50Ms: 50, refusedRatio: 0.75 };
const CONCURRENCY = 32;
const ROUNDS = 3;
const WARMUP_MS = 2000;
const MEASURE_MS = 4000;
const WEBHOOKS = 2000;
const RATE = 500;
const RATE_REQUESTS = 5000;
/**
 * One delivery to each webhook before the measured ones: the figure is of the steady state (every
 * webhook cached), not of 2 000 webhooks going cold at once.
 */
const RATE_WARMUP = WEBHOOKS;
const QUEUED_DELIVERIES = 200;

/** The throughput rounds' auth modes, each beside the bare endpoint (target: TARGETS.ratio). */
const MODES = ['token', 'sw', 'github'] as const;
type Mode = (typeof MODES)[number];
type Sample = 'bare' | Mode;
const LABELS: Record<Sample, string> = {
  bare: 'bare',
  token: 'token',
  sw: 'standard_webhooks',
  github: 'github',
};
/** github's has no target of the issue's: it shows what a delivery's own id costs beside bare. */
const TARGETED: Record<Mode, boolean> = { token: true, sw: true, github: false };
const perSample = <T>(make: () => T): Record<Sample, T> => ({
  bare: make(),
  token: make(),
  sw: make(),
  github: make(),
});

const progress = (m: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

/** A round of the throughput phase (see ingressLoad). */
const throughput = (
  spec: Omit<LoadSpec, 'durationMs'>,
  recipe: () => VariantsRecipe,
  redis: Redis,
) => ingressLoad(spec, recipe, redis, { warmupMs: WARMUP_MS, measureMs: MEASURE_MS });

interface CpuSplit {
  /** The bench process's other threads: V8's (garbage collection, compilation) and libuv's. */
  helpers: number;
  /** The load generator's thread: the clients' side, the same requests on both sides. */
  generator: number;
  database: number;
  redis: number;
}

/**
 * Every round's CPU per request, by where it was spent: on a machine of two cores, the ratio to
 * bare is the ratio of these sums (less the idle time a closed loop leaves) as much as of the
 * server thread's.
 */
function machineSplit(name: string, serverUs: number[], splits: CpuSplit[]): string {
  const of = (key: keyof CpuSplit) => median(splits.map((split) => split[key]));
  const parts: [string, number][] = [
    ['server thread', median(serverUs)],
    ['helper threads', of('helpers')],
    ['load generator', of('generator')],
    ['MariaDB', of('database')],
    ['Redis', of('redis')],
  ];
  const total = parts.reduce((sum, [, us]) => sum + us, 0);
  return `${name} ${total.toFixed(0)} (${parts.map(([part, us]) => `${part} ${us.toFixed(0)}`).join(', ')})`;
}

function floodRow(flood: FloodResult): string[] {
  const ratio = flood.bareErrors > 0 ? NaN : median(flood.ratios);
  return [
    `ingress, refused ${flood.status}: ${flood.name} (answers/s)`,
    `${median(flood.answeredPerSecond).toFixed(0)} (${(ratio * 100).toFixed(0)} % of bare)`,
    `≥ ${TARGETS.refusedRatio * 100} % (bench's own)`,
    ratio >= TARGETS.refusedRatio ? 'MET' : 'MISSED',
  ];
}

function floodDetails(flood: FloodResult): string {
  const rounds = flood.answeredPerSecond
    .map((rps, i) => `${rps.toFixed(0)} / ${flood.bareAnsweredPerSecond[i].toFixed(0)}`)
    .join(', ');
  const ratios = flood.ratios.map((r) => `${(r * 100).toFixed(0)} %`).join(', ');
  const others = Object.entries(flood.otherStatuses)
    .map(([status, n]) => `${n} × ${status}`)
    .join(', ');
  return (
    `refused ${flood.status} (${flood.name}): answers/s per round, flood / bare: ${rounds} (${ratios}); ` +
    `µs per answer (medians of rounds): server thread ${flood.serverUs.toFixed(0)} (bare ${flood.bareServerUs.toFixed(0)}), ` +
    `MariaDB ${flood.databaseUs.toFixed(0)}, Redis ${flood.redisUs.toFixed(0)} (above their CPU beside the bare rounds); ` +
    `other answers: ${others || 'none'}; unanswered: ${flood.unanswered}; ` +
    `bare's errors: ${flood.bareErrors}`
  );
}

async function main() {
  Logger.overrideLogger(['error']);
  const model = await startFakeModelServer();
  const databaseSocket = benchDatabaseSocket();
  const env = createTestEnvironment('bench_ingress', model.url, { databaseSocket });
  const envQueued = createTestEnvironment('bench_ingress_queued', model.url, { databaseSocket });
  const rows: string[][] = [['measure', 'result', 'target', 'verdict']];
  try {
    // 1. Throughput and latency: api + ingress only, webhooks seeded in MySQL.
    const app = await startTestApp(env, ['api', 'ingress']);
    const bare = await startBareApp();
    const key = Buffer.from(TEST_SECRETS_KEY, 'hex');
    const tokenHooks = await seedWebhooks(app.dataSource, key, WEBHOOKS, 'token');
    const hooksOf: Record<Mode, typeof tokenHooks> = {
      token: tokenHooks,
      sw: await seedWebhooks(app.dataSource, key, WEBHOOKS, 'standard_webhooks'),
      github: await seedWebhooks(app.dataSource, key, WEBHOOKS, 'github'),
    };
    const perRound = 30_000;
    let offset = 0;
    const bareUrl = bare.url.replace(/\/runs$/, '/deliveries');
    // The bare endpoint gets the same requests as the token rounds (each its own 1 KB body), so
    // the load generator does the same work per request on both sides of the ratio.
    const next = (hooks: typeof tokenHooks, sendTo?: string) => () =>
      deliveryRecipe(app.ingressUrl, hooks, perRound, (offset += perRound), sendTo);
    const samples = perSample(() => [] as number[]);
    const redisPerRequest = perSample(() => [] as number[]);
    const redis = new Redis(REDIS_URL);
    const cpu = perSample(() => [] as number[]);
    const splits = perSample(() => [] as CpuSplit[]);
    let errors = 0;
    let firstError: string | null = null;
    // First, on the freshly seeded database: right after the throughput rounds MariaDB is still
    // flushing their pages for a minute or more, which is that phase's bill, not a steady 500/s.
    progress(`latency at ${RATE}/s`);
    const latencyNeighbours = watchNeighbourCpu();
    const latencyGc = watchGcPauses();
    const paced = await runLoad({
      url: '',
      method: 'POST',
      concurrency: 64,
      ratePerSecond: RATE,
      warmupRequests: RATE_WARMUP,
      requests: RATE_REQUESTS,
      variantsFrom: deliveryRecipe(
        app.ingressUrl,
        tokenHooks,
        RATE_WARMUP + RATE_REQUESTS,
        (offset += perRound),
      ),
    });
    const latencyCores = latencyNeighbours();
    const gcAtRate = latencyGc();
    errors += paced.errors;
    firstError ??= paced.firstError;
    const throughputNeighbours = watchNeighbourCpu();
    for (let round = 0; round < ROUNDS; round++) {
      progress(`throughput round ${round + 1}/${ROUNDS}`);
      const baseline = await throughput(
        { url: '', method: 'POST', concurrency: CONCURRENCY },
        next(tokenHooks, bareUrl),
        redis,
      );
      samples.bare.push(baseline.rps);
      redisPerRequest.bare.push(baseline.redisCommands);
      cpu.bare.push(baseline.cpuUs);
      splits.bare.push(baseline.split);
      for (const name of MODES) {
        const r = await throughput(
          { url: '', method: 'POST', concurrency: CONCURRENCY },
          next(hooksOf[name]),
          redis,
        );
        samples[name].push(r.rps);
        redisPerRequest[name].push(r.redisCommands);
        cpu[name].push(r.cpuUs);
        splits[name].push(r.split);
        errors += r.errors;
        firstError ??= r.firstError;
      }
    }
    const throughputCores = throughputNeighbours();
    progress('refused floods');
    const floods = await measureRefusedFloods(app.dataSource, key, app.ingressUrl, bareUrl, redis);
    const [{ n: accepted }] = (await app.dataSource.query(
      `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'accepted'`,
    )) as { n: string }[];
    await redis.quit();
    await bare.close();
    await app.close();

    const ratio = (name: Mode) => median(samples[name]) / median(samples.bare);
    const cpuRatios = (name: Mode) =>
      cpu[name].map((us, i) => `${((cpu.bare[i] / us) * 100).toFixed(0)} %`).join(', ');
    const roundRatios = (name: Mode) =>
      samples[name].map((rps, i) => `${((rps / samples.bare[i]) * 100).toFixed(0)} %`).join(', ');
    const eachMode = (line: (name: Mode) => string) =>
      MODES.map((name) => `${LABELS[name]} ${line(name)}`).join('; ');
    const cores = (n: number | null) => (n === null ? 'n/a' : n.toFixed(2));
    const p99 = percentile(paced.latenciesMs, 99);
    rows.push([
      'bare Nest/Express POST → 202 (req/s, median of rounds)',
      median(samples.bare).toFixed(0),
      '',
      '',
    ]);
    for (const name of MODES) {
      rows.push([
        `ingress, ${LABELS[name]}${name === 'token' ? ' auth' : ''} (accepted/s)`,
        `${median(samples[name]).toFixed(0)} (${(ratio(name) * 100).toFixed(0)} % of bare)`,
        TARGETED[name] ? '≥ 50 %' : '',
        !TARGETED[name] ? '' : ratio(name) >= TARGETS.ratio ? 'MET' : 'MISSED',
      ]);
    }
    for (const flood of floods) rows.push(floodRow(flood));
    rows.push([
      `latency at ${RATE} deliveries/s, p50 / p99`,
      `${ms(percentile(paced.latenciesMs, 50))} / ${ms(p99)}`,
      'p99 ≤ 20 ms',
      p99 <= TARGETS.p99AtRateMs ? 'MET' : 'MISSED',
    ]);

    // 2. Delivery → QUEUED run: api + ingress + worker, automations through the real API.
    progress('delivery → QUEUED run');
    // A database of its own: the throughput phases left ~30k deliveries for a worker to evaluate.
    const full = await startTestApp(envQueued, ['api', 'ingress', 'worker']);
    const api = apiClient(full.baseUrl, full.apiKey);
    const factory = await createFactory(api, 'bench-automation');
    const hooks: CreatedWebhook[] = [];
    for (let i = 0; i < 20; i++) hooks.push(await createWebhook(api, factory, { name: `q${i}` }));
    const trigger = `---\nmodel: fake-model\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [${hooks.map((h) => h.uid).join(', ')}]\n      payload:\n        event: [deploy.finished]\n---\nHandle it.\n`;
    const current = (await api.get(`/factory/${factory}/definition`)).body.files;
    await api.put(`/factory/${factory}/definition`, {
      files: [
        ...current,
        ...definitionFiles({ 'automations/bench/automation.md': trigger }).files.slice(1),
      ],
    });
    const requests = Array.from({ length: QUEUED_DELIVERIES }, (_, i) => {
      const hook = hooks[i % hooks.length];
      return {
        url: `${full.ingressUrl}/webhooks/w/${hook.uid}`,
        method: 'POST' as const,
        headers: { authorization: `Bearer ${hook.secret}` },
        body: JSON.stringify({ event: 'deploy.finished', i }),
      };
    });
    const sent = await runLoad({
      url: '',
      method: 'POST',
      concurrency: 8,
      ratePerSecond: 20,
      requests: QUEUED_DELIVERIES,
      variants: requests,
    });
    errors += sent.errors;
    const rowsQueued = await waitFor(
      async () =>
        (await full.dataSource.query(
          `SELECT TIMESTAMPDIFF(MICROSECOND, d.received_at, r.created_at) / 1000 AS ms FROM webhook_delivery_runs x JOIN webhook_deliveries d ON d.id = x.delivery_entry_id JOIN runs r ON r.id = x.run_id`,
        )) as { ms: string }[],
      (list) => list.length >= QUEUED_DELIVERIES,
      { timeoutMs: 60_000, what: 'every delivery to start its run' },
    );
    await full.close();
    const toQueued = rowsQueued.map((r) => Number(r.ms));
    const p50q = percentile(toQueued, 50);
    rows.push([
      'accepted delivery → QUEUED run, p50 / p99',
      `${ms(p50q)} / ${ms(percentile(toQueued, 99))}`,
      'p50 ≤ 50 ms',
      p50q <= TARGETS.toQueuedP50Ms ? 'MET' : 'MISSED',
    ]);

    process.stdout.write(`\n${table(rows)}\n\n`);
    process.stdout.write(
      [
        ...machineFacts(),
        await databaseFacts(MYSQL_URL),
        `settings: closed loop, concurrency ${CONCURRENCY}, keep-alive, ${ROUNDS} alternating rounds of ${WARMUP_MS / 1000} s warm-up + ${MEASURE_MS / 1000} s measured; ${WEBHOOKS} webhooks per auth mode; 1 KB unique bodies, built in the load generator's thread (the bare endpoint gets the token rounds' requests); latency (before the throughput rounds): ${RATE_WARMUP} deliveries at ${RATE}/s (one per token webhook) unmeasured, then ${RATE_REQUESTS} measured; ${describeBenchDatabase(databaseSocket)}`,
        REFUSED_FLOODS_SETTINGS,
        `rounds (req/s): bare ${samples.bare.map((x) => x.toFixed(0)).join(', ')}; ${eachMode((name) => samples[name].map((x) => x.toFixed(0)).join(', '))}`,
        // Each round's ingress figure beside the bare one measured just before it: the host's drift
        // between rounds (bare alone moves by half on this kind of machine) shows here.
        `per round, ingress / bare (req/s): ${eachMode(roundRatios)}`,
        `server-thread CPU per request (µs, median): bare ${median(cpu.bare).toFixed(0)}; ${eachMode((name) => median(cpu[name]).toFixed(0))} (MySQL and Redis work not included)`,
        `bare / ingress server-thread CPU per request, per round (the ratio the CPU cost alone predicts): ${eachMode(cpuRatios)}`,
        `the machine's CPU per request (µs, median of rounds): ${(['bare', ...MODES] as const).map((name) => machineSplit(LABELS[name], cpu[name], splits[name])).join('; ')}`,
        `Redis commands per request (median of rounds; every client's): ${(['bare', ...MODES] as const).map((name) => `${LABELS[name]} ${median(redisPerRequest[name]).toFixed(2)}`).join(', ')}`,
        // An open-loop p99 is the first figure other processes spoil: the server thread waiting
        // for a core holds up every delivery that arrives meanwhile.
        `CPU taken by other processes (cores, phase average): throughput ${cores(throughputCores)}, latency at ${RATE}/s ${cores(latencyCores)}`,
        `GC pauses of the bench process at ${RATE}/s (warm-up included): ${gcAtRate}`,
        ...floods.map(floodDetails),
        `deliveries accepted (all phases): ${accepted}; non-2xx answers: ${errors}${firstError ? ` (first: ${firstError})` : ''}`,
        '',
      ].join('\n'),
    );
  } finally {
    await env.destroy();
    await envQueued.destroy();
    await model.close();
  }
}

void main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`bench failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
