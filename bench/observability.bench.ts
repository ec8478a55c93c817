import pino from 'pino';
import { loadConfig } from '../src/config/app-config';
import { createObservability, observeHttp } from '../src/bootstrap/observability';
import { startBareApp } from './bare-app';
import { median } from './creation-phase';
import { runLoad } from './load-generator';
import { table } from './stats';
import { mainThreadCpuMs } from './thread-cpu';
import { machineFacts } from './machine';

/**
 * `npm run bench:observability`: what Ambient's per-request observability costs — the request
 * id, the HTTP duration histogram and the JSON request log line (written asynchronously to
 * /dev/null) — on the bare Nest/Express endpoint of the other benches, as server-thread CPU per
 * request, which other processes on a shared machine hardly move. Alternating rounds.
 */
const ROUNDS = 5;
const REQUESTS = 20_000;
const WARMUP = 3_000;

async function cpuPerRequest(url: string): Promise<{ us: number; rps: number }> {
  const spec = {
    url,
    method: 'POST' as const,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ prompt: 'x'.repeat(200) }),
    concurrency: 32,
  };
  await runLoad({ ...spec, requests: WARMUP });
  const before = mainThreadCpuMs()!;
  const result = await runLoad({ ...spec, requests: REQUESTS });
  const after = mainThreadCpuMs()!;
  if (result.errors) throw new Error(`errors: ${result.firstError}`);
  return { us: ((after - before) * 1000) / REQUESTS, rps: result.requestsPerSecond };
}

async function main(): Promise<void> {
  const config = loadConfig(process.env, { 'log.level': 'info', 'log.format': 'json' });
  const observability = createObservability(
    config,
    pino.destination({ dest: '/dev/null', sync: false }),
  );
  const bare = await startBareApp();
  const observed = await startBareApp((app) => observeHttp(app, observability));
  const samples = { bare: [] as number[], observed: [] as number[] };
  for (let round = 1; round <= ROUNDS; round += 1) {
    process.stderr.write(`round ${round}/${ROUNDS}\n`);
    samples.bare.push((await cpuPerRequest(bare.url)).us);
    samples.observed.push((await cpuPerRequest(observed.url)).us);
  }
  await bare.close();
  await observed.close();
  const b = median(samples.bare);
  const o = median(samples.observed);
  process.stdout.write(
    table([
      ['server-thread CPU per request (median of rounds)', 'µs'],
      ['bare Nest/Express POST', b.toFixed(0)],
      ['the same + request id, HTTP histogram, JSON request log', o.toFixed(0)],
      ['added per request', (o - b).toFixed(0)],
    ]) +
      `\nrounds (µs): bare ${samples.bare.map((v) => v.toFixed(0)).join(', ')}; ` +
      `observed ${samples.observed.map((v) => v.toFixed(0)).join(', ')}\n` +
      `${machineFacts().join('\n')}\n`,
  );
}

void main();
