import { Agent, request } from 'node:http';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { mainThreadCpuMs, ownThreadCpuMs, processCpuMs } from './thread-cpu';

/**
 * A small HTTP client for the bench. It runs in a worker thread so that its own work does not
 * share the event loop with the server under test, which lives on the bench's main thread.
 */

export interface RequestSpec {
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

/**
 * Closed loop (`concurrency` requests always in flight, for `durationMs` or `requests`) or, with
 * `ratePerSecond`, open loop: `requests` sent at a steady rate whatever the responses do.
 */
export interface LoadSpec extends RequestSpec {
  concurrency: number;
  durationMs?: number;
  requests?: number;
  ratePerSecond?: number;
  /**
   * Open loop only: this many requests are sent first, at the same rate, and not counted, so
   * the figures describe the steady state (warm connections and JIT on both sides).
   */
  warmupRequests?: number;
  /** Requests sent in turn instead of the spec itself (e.g. unique or signed bodies). */
  variants?: RequestSpec[];
  /**
   * Like `variants`, but built in the load's own thread before its first request: tens of
   * thousands of requests built on the caller's thread would be garbage collected there, in the
   * middle of the measurement, by the server under test.
   */
  variantsFrom?: VariantsRecipe;
}

/** `require(module)[exportName](...args)` must return the variants (a RequestSpec[]). */
export interface VariantsRecipe {
  module: string;
  exportName: string;
  args: unknown[];
}

export interface LoadResult {
  completed: number;
  /** Responses other than 2xx, and transport errors. */
  errors: number;
  firstError: string | null;
  /** How many responses came with each HTTP status (an open loop's warm-up's included). */
  statuses: Record<number, number>;
  /** Requests that got no response (connection errors; an open loop's warm-up's included). */
  unanswered: number;
  elapsedMs: number;
  latenciesMs: number[];
  requestsPerSecond: number;
  /**
   * CPU (ms) of the calling thread (the server under test, in the benches) from the load's first
   * request to its last response; null off Linux. Unlike CPU read around `runLoad`, it leaves out
   * handing the requests to the load's thread, which costs the caller ~0.2 ms per KB of variants.
   */
  callerCpuMs: number | null;
  /** CPU (ms) of the load's own thread over the load; null off Linux. */
  generatorCpuMs: number | null;
  /**
   * CPU (ms) of the whole process over the same span as `callerCpuMs`: with the load's thread,
   * V8's and libuv's helper threads (garbage collection, compilation, file and DNS work).
   */
  processCpuMs: number | null;
}

/** Follows `next_cursor` of a list endpoint: `pages` pages per walk, `walks` times. */
export interface WalkSpec extends RequestSpec {
  pages: number;
  walks: number;
}

export interface WalkResult {
  /** latenciesMs[i] holds the latencies of page i + 1 over every walk. */
  latenciesMs: number[][];
  rowsSeen: number;
  /** Whether every walk found a next page after each page it fetched. */
  complete: boolean;
}

type Job = { kind: 'load'; spec: LoadSpec } | { kind: 'walk'; spec: WalkSpec };

type CallerCpu = 'callerCpuMs' | 'processCpuMs';

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  let startedAt: { caller: number | null; process: number | null } | null = null;
  const result = await inWorker<Omit<LoadResult, CallerCpu>>({ kind: 'load', spec }, () => {
    startedAt = { caller: mainThreadCpuMs(), process: processCpuMs() };
  });
  const endedAt = { caller: mainThreadCpuMs(), process: processCpuMs() };
  const spent = (key: 'caller' | 'process') => {
    const from = (startedAt as typeof endedAt | null)?.[key] ?? null;
    const to = endedAt[key];
    return from === null || to === null ? null : to - from;
  };
  return { ...result, callerCpuMs: spent('caller'), processCpuMs: spent('process') };
}

export function walkPages(spec: WalkSpec): Promise<WalkResult> {
  return inWorker({ kind: 'walk', spec });
}

const STARTED = 'started';

/** Runs `job` in a worker thread; `started` is called when it sends its first request. */
function inWorker<T>(job: Job, started?: () => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(__filename, { workerData: job });
    worker.on('message', (message: T | typeof STARTED) => {
      if (message === STARTED) return started?.();
      resolve(message);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

interface Response {
  status: number;
  body: string;
}

function send(agent: Agent, spec: RequestSpec, url = spec.url): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: spec.method, agent, headers: spec.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(spec.body);
  });
}

class Tally {
  completed = 0;
  errors = 0;
  firstError: string | null = null;
  readonly statuses: Record<number, number> = {};
  unanswered = 0;
  readonly latenciesMs: number[] = [];

  async timed(agent: Agent, spec: RequestSpec): Promise<void> {
    const start = performance.now();
    try {
      const res = await send(agent, spec);
      this.latenciesMs.push(performance.now() - start);
      this.statuses[res.status] = (this.statuses[res.status] ?? 0) + 1;
      if (res.status >= 200 && res.status < 300) this.completed++;
      else this.fail(`HTTP ${res.status}: ${res.body.slice(0, 200)}`);
    } catch (err) {
      this.unanswered++;
      this.fail((err as Error).message);
    }
  }

  private fail(message: string): void {
    this.errors++;
    this.firstError ??= message;
  }
}

async function load(spec: LoadSpec): Promise<Omit<LoadResult, CallerCpu>> {
  const agent = new Agent({ keepAlive: true, maxSockets: spec.concurrency });
  const tally = new Tally();
  const cpuAtStart = ownThreadCpuMs();
  const start = performance.now();
  if (spec.ratePerSecond) await openLoop(agent, spec, tally, spec.ratePerSecond);
  else await closedLoop(agent, spec, tally, start);
  const elapsedMs = performance.now() - start;
  const cpuAtEnd = ownThreadCpuMs();
  agent.destroy();
  return {
    generatorCpuMs: cpuAtStart === null || cpuAtEnd === null ? null : cpuAtEnd - cpuAtStart,
    completed: tally.completed,
    errors: tally.errors,
    firstError: tally.firstError,
    statuses: tally.statuses,
    unanswered: tally.unanswered,
    elapsedMs,
    latenciesMs: tally.latenciesMs,
    requestsPerSecond: (tally.completed * 1000) / elapsedMs,
  };
}

let picked = 0;
function pick(spec: LoadSpec): RequestSpec {
  return spec.variants?.length ? spec.variants[picked++ % spec.variants.length] : spec;
}

async function closedLoop(agent: Agent, spec: LoadSpec, tally: Tally, start: number) {
  const deadline = spec.durationMs === undefined ? Infinity : start + spec.durationMs;
  let remaining = spec.requests ?? Infinity;
  const loop = async (): Promise<void> => {
    while (remaining-- > 0 && performance.now() < deadline) await tally.timed(agent, pick(spec));
  };
  await Promise.all(Array.from({ length: spec.concurrency }, loop));
}

async function openLoop(agent: Agent, spec: LoadSpec, tally: Tally, rate: number) {
  const warmup = spec.warmupRequests ?? 0;
  const discarded = new Tally();
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < warmup + (spec.requests ?? 0); i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push((i < warmup ? discarded : tally).timed(agent, pick(spec)));
  }
  await Promise.all(inFlight);
  tally.errors += discarded.errors; // failures count, warm-up or not
  tally.firstError ??= discarded.firstError;
  tally.unanswered += discarded.unanswered;
  for (const [status, n] of Object.entries(discarded.statuses)) {
    tally.statuses[Number(status)] = (tally.statuses[Number(status)] ?? 0) + n;
  }
}

async function walk(spec: WalkSpec): Promise<WalkResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latenciesMs: number[][] = Array.from({ length: spec.pages }, () => []);
  let rowsSeen = 0;
  let complete = true;
  for (let w = 0; w < spec.walks; w++) {
    let url = spec.url;
    for (let page = 0; page < spec.pages; page++) {
      const start = performance.now();
      const res = await send(agent, spec, url);
      latenciesMs[page].push(performance.now() - start);
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.body.slice(0, 200)}`);
      const body = JSON.parse(res.body) as { runs: unknown[]; page_info: { next_cursor: string } };
      rowsSeen += body.runs.length;
      if (!body.page_info.next_cursor) {
        if (page < spec.pages - 1) complete = false;
        break;
      }
      const next = new URL(spec.url);
      next.searchParams.set('cursor', body.page_info.next_cursor);
      url = next.toString();
    }
  }
  agent.destroy();
  return { latenciesMs, rowsSeen, complete };
}

function buildVariants(recipe: VariantsRecipe): RequestSpec[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const module = require(recipe.module) as Record<string, (...args: unknown[]) => RequestSpec[]>;
  return module[recipe.exportName](...recipe.args);
}

if (!isMainThread && parentPort && (workerData as Job | undefined)?.kind) {
  const job = workerData as Job;
  if (job.kind === 'load' && job.spec.variantsFrom) {
    job.spec.variants = buildVariants(job.spec.variantsFrom);
  }
  parentPort.postMessage(STARTED);
  const done = job.kind === 'load' ? load(job.spec) : walk(job.spec);
  void done.then((result) => parentPort?.postMessage(result));
}
