import { Logger } from '@nestjs/common';
import { availableParallelism, totalmem } from 'node:os';
import { startFakeModelServer } from '../test/fixtures/fake-model-server';
import { MYSQL_URL } from '../test/support/test-app';
import { CreationResult, median, roundRatios, runCreationPhase } from './creation-phase';
import { DispatchResult, runDispatchPhase } from './dispatch-phase';
import {
  CREATED_AFTER_DAYS,
  DEEP_CURSOR_DAYS,
  LARGE_TEAM_RUNS,
  ListResult,
  runListPhase,
  SMALL_TEAM_RUNS,
} from './list-phase';
import { formatPlan } from './sql-capture';
import { databaseFacts, machineFacts as hostFacts } from './machine';
import { ms, percentile, seconds, table } from './stats';
import { watchNeighbourCpu } from './thread-cpu';

/**
 * `npm run bench:runs`: run creation throughput against a bare Nest endpoint, dispatch latency,
 * and list latency at 10k and 1M runs, printed as one table. A benchmark, not a test: a missed
 * target is reported as MISSED and the process still exits 0.
 */

const TARGETS = {
  creationRatio: 0.35,
  dispatchP50Ms: 25,
  listP95Ms: 50,
  listGrowth: 2,
};

function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

async function machineFacts(): Promise<string[]> {
  return [
    ...hostFacts(),
    `memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    await databaseFacts(MYSQL_URL),
  ];
}

/** Above this many cores taken by other processes in a phase, the figures are flagged. */
const NEIGHBOUR_CORES_LIMIT = 0.15 * availableParallelism();

/** Runs a phase and records how much CPU other processes on the machine took meanwhile. */
async function observed<T>(name: string, phase: () => Promise<T>, log: string[][]): Promise<T> {
  progress(name);
  const neighbours = watchNeighbourCpu();
  const result = await phase();
  const cores = neighbours();
  log.push([name, cores === null ? 'n/a' : cores.toFixed(2)]);
  return result;
}

function neighbourReport(log: string[][]): string[] {
  const line =
    'CPU taken by other processes (cores, phase average): ' +
    log.map(([name, cores]) => `${name} ${cores}`).join(', ');
  const busy = log.some(([, cores]) => Number(cores) > NEIGHBOUR_CORES_LIMIT);
  if (!busy) return [line];
  return [
    line,
    `WARNING: above ${NEIGHBOUR_CORES_LIMIT.toFixed(2)} cores in some phase: other processes ` +
      'competed for the CPU, so those figures are pessimistic. Rerun on an idle machine.',
  ];
}

/** `BENCH_RUNS_CREATION_ONLY=1`: the creation phase alone (≈ 45 s instead of minutes). */
const CREATION_ONLY = process.env.BENCH_RUNS_CREATION_ONLY === '1';

const verdict = (met: boolean): string => (met ? 'met' : 'MISSED');
const rate = (value: number): string => `${value.toFixed(0)} req/s`;

function creationRows(c: CreationResult): string[][] {
  const bare = median(c.bare.map((s) => s.requestsPerSecond));
  const ambient = median(c.ambient.map((s) => s.requestsPerSecond));
  const ratio = median(roundRatios(c, (s) => s.requestsPerSecond));
  return [
    ['Run creation: POST /agent/runs (API role only)', rate(ambient), '', ''],
    ['Bare Nest/Express POST, same machine and run', rate(bare), '', ''],
    [
      'Creation / bare throughput',
      `${(ratio * 100).toFixed(1)}%`,
      `≥ ${TARGETS.creationRatio * 100}%`,
      verdict(ratio >= TARGETS.creationRatio),
    ],
  ];
}

function dispatchRows(d: DispatchResult): string[][] {
  const p50 = percentile(d.dispatchMs, 50);
  return [
    [
      'Dispatch QUEUED→INPROGRESS p50',
      ms(p50),
      `≤ ${TARGETS.dispatchP50Ms} ms`,
      verdict(p50 <= TARGETS.dispatchP50Ms),
    ],
    ['Dispatch QUEUED→INPROGRESS p99', ms(percentile(d.dispatchMs, 99)), '', ''],
  ];
}

const pair = (samples: number[]) =>
  `${ms(percentile(samples, 50))} / ${ms(percentile(samples, 95))}`;

/** Keyset pages are held to the first page's target. */
function keysetRow(name: string, samples: number[]): string[] {
  const p95 = percentile(samples, 95);
  return [name, pair(samples), `p95 ≤ ${TARGETS.listP95Ms} ms`, verdict(p95 <= TARGETS.listP95Ms)];
}

function listRows(l: ListResult): string[][] {
  const small95 = percentile(l.small.firstPageMs, 95);
  const large95 = percentile(l.large.firstPageMs, 95);
  const growth = large95 / small95;
  const label = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);
  return [
    [`List p50 / p95, ${label(SMALL_TEAM_RUNS)} runs`, pair(l.small.firstPageMs), '', ''],
    [
      `List p50 / p95, ${label(LARGE_TEAM_RUNS)} runs`,
      pair(l.large.firstPageMs),
      `p95 ≤ ${TARGETS.listP95Ms} ms`,
      verdict(large95 <= TARGETS.listP95Ms),
    ],
    [
      `List p95 ${label(LARGE_TEAM_RUNS)} / ${label(SMALL_TEAM_RUNS)}`,
      `${growth.toFixed(2)}×`,
      `≤ ${TARGETS.listGrowth}×`,
      verdict(growth <= TARGETS.listGrowth),
    ],
    keysetRow(
      `List keyset pages 2–6 p50 / p95, ${label(LARGE_TEAM_RUNS)} runs`,
      l.large.keysetPageMs,
    ),
    keysetRow(
      `List deep keyset pages (cursor ${DEEP_CURSOR_DAYS} days back), ${label(LARGE_TEAM_RUNS)}`,
      l.large.deepPageMs,
    ),
  ];
}

function creationDetails(c: CreationResult): string[] {
  const line = (name: string, s: CreationResult['bare'][number], round: number) =>
    `  round ${round + 1} ${name.padEnd(7)} ${rate(s.requestsPerSecond).padStart(11)}  ` +
    `p50 ${ms(s.p50Ms)}  p99 ${ms(s.p99Ms)}  server-thread CPU ` +
    `${s.cpuUsPerRequest === null ? 'n/a' : `${s.cpuUsPerRequest.toFixed(0)} µs/req`}` +
    (s.servicesCpuUsPerRequest === null
      ? ''
      : `  MariaDB+Redis ${s.servicesCpuUsPerRequest.toFixed(0)} µs/req`) +
    (s.idleCores === null ? '' : `  idle ${s.idleCores.toFixed(2)} cores`) +
    (s.errors ? `  ERRORS ${s.errors}: ${s.firstError}` : '');
  const percent = (ratios: (number | null)[]) =>
    ratios.map((r) => (r === null ? 'n/a' : `${(r * 100).toFixed(1)}%`)).join(', ');
  const cpuRatios = roundRatios(c, (s) => (s.cpuUsPerRequest ? 1 / s.cpuUsPerRequest : null));
  return [
    `Creation (${c.settings}; ${c.runsCreated} runs created; the table shows medians):`,
    ...c.bare.flatMap((b, i) => [line('bare', b, i), line('ambient', c.ambient[i], i)]),
    `  ambient / bare per round: throughput ${percent(roundRatios(c, (s) => s.requestsPerSecond))}`,
    `  bare / ambient server-thread CPU per request, per round: ${percent(cpuRatios)} ` +
      '(the ratio the server-thread CPU cost alone predicts; little moved by other processes)',
  ];
}

function dispatchDetails(d: DispatchResult): string[] {
  const states = Object.entries(d.states)
    .map(([state, n]) => `${state} ${n}`)
    .join(', ');
  return [
    `Dispatch (${d.settings}):`,
    `  QUEUED→CLAIMED p50 ${ms(percentile(d.claimMs, 50))}  p99 ${ms(percentile(d.claimMs, 99))}`,
    `  QUEUED→INPROGRESS p50 ${ms(percentile(d.dispatchMs, 50))}  p90 ` +
      `${ms(percentile(d.dispatchMs, 90))}  p99 ${ms(percentile(d.dispatchMs, 99))}  max ` +
      `${ms(Math.max(...d.dispatchMs))}`,
    `  POST /agent/runs at that rate p50 ${ms(percentile(d.httpMs, 50))}; final states: ${states}`,
  ];
}

function listDetails(l: ListResult): string[] {
  const walk = (f: ListResult['small']) =>
    `${f.rowsPerWalk.toFixed(0)} rows per 6-page walk` +
    (f.walksComplete ? '' : ' (walk ended early)');
  return [
    `List (GET ${l.query}, created_after = now − ${CREATED_AFTER_DAYS} days; sequential requests):`,
    `  ${SMALL_TEAM_RUNS} runs: seeded + ANALYZE in ${seconds(l.seedSmallMs)}; keyset pages 2–6 ` +
      `p50 / p95 ${pair(l.small.keysetPageMs)}; deep pages ${pair(l.small.deepPageMs)}; ` +
      walk(l.small),
    `  ${LARGE_TEAM_RUNS} runs: +${LARGE_TEAM_RUNS - SMALL_TEAM_RUNS} seeded in ` +
      `${seconds(l.seedLargeMs)} (INSERT … SELECT ${seconds(l.seedLargeInsertMs)}, index build ` +
      `${seconds(l.seedLargeMs - l.seedLargeInsertMs)}), ANALYZE ${seconds(l.analyzeMs)}; ` +
      walk(l.large),
    `  Plan of the first page at ${LARGE_TEAM_RUNS} runs:`,
    ...formatPlan(l.firstPagePlan)
      .split('\n')
      .map((s) => `    ${s}`),
    `  Plan of a deep next_cursor page at ${LARGE_TEAM_RUNS} runs:`,
    ...formatPlan(l.deepPagePlan)
      .split('\n')
      .map((s) => `    ${s}`),
    `  Deep page SQL: ${l.deepPageSql.replace(/\s+/g, ' ')}`,
  ];
}

async function main(): Promise<void> {
  Logger.overrideLogger(['warn', 'error']);
  const started = performance.now();
  const neighbours: string[][] = [];
  const facts = await machineFacts();
  const model = await startFakeModelServer();
  try {
    const creation = await observed('creation', () => runCreationPhase(model), neighbours);
    const dispatch = CREATION_ONLY
      ? null
      : await observed('dispatch', () => runDispatchPhase(model), neighbours);
    const list = CREATION_ONLY
      ? null
      : await observed('list', () => runListPhase(model, progress), neighbours);
    const rows = [
      ['Figure', 'Result', 'Target', 'Status'],
      ...creationRows(creation),
      ...(dispatch ? dispatchRows(dispatch) : []),
      ...(list ? listRows(list) : []),
    ];
    const output = [
      '',
      'Ambient runs benchmark',
      ...facts,
      '',
      table(rows),
      '',
      ...creationDetails(creation),
      ...(dispatch ? ['', ...dispatchDetails(dispatch)] : []),
      ...(list ? ['', ...listDetails(list)] : []),
      '',
      `total time ${seconds(performance.now() - started)}`,
      ...neighbourReport(neighbours),
    ];
    process.stdout.write(`${output.join('\n')}\n`);
  } finally {
    await model.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
