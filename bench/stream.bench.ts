import { Logger } from '@nestjs/common';
import { loadavg } from 'node:os';
import { DataSource } from 'typeorm';
import { RunTransitions } from '../src/modules/runs/run-transitions.service';
import { apiClient } from '../test/support/api-client';
import { isStream, openSse, SseStream } from '../test/support/sse-stream';
import { createTestEnvironment, startTestApp, TestApp } from '../test/support/test-app';
import { machineFacts } from './machine';
import { ms, percentile, table } from './stats';

/**
 * `npm run bench:stream`: how fast a run's live stream delivers across API replicas. Replica A
 * appends timeline events (as an executing worker does, through RunTransitions); a client reads
 * the run's stream from replica B. The baseline, in the same run: the same events found by a
 * client polling `GET /agent/runs/{id}/timeline` on replica B back to back (the best polling can
 * do). Then one event fanned out to many open streams of one run. A benchmark, not a test.
 */

const EVENTS = 200;
const WARM_UP_EVENTS = 10;
const FAN_OUT_STREAMS = 200;

function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

async function openStream(app: TestApp, runId: string): Promise<SseStream> {
  const stream = await openSse(`${app.baseUrl}/agent/runs/${runId}/stream`, {
    apiKey: app.apiKey,
  });
  if (!isStream(stream)) throw new Error(`stream refused: ${JSON.stringify(stream)}`);
  await stream.next((e) => e.event === 'run', 'the snapshot');
  return stream;
}

/** Appends one timeline event on replica A; resolves once it is committed. */
function appender(a: TestApp): (runId: string, marker: string) => Promise<number> {
  const transitions = a.ambient.app.get(RunTransitions);
  const dataSource = a.ambient.app.get(DataSource);
  return async (runId, marker) => {
    await dataSource.transaction((manager) =>
      transitions.appendEvent(manager, runId, 'bench_marker', { payload: { marker } }),
    );
    return performance.now();
  };
}

const hasMarker = (data: string, marker: string) => data.includes(`"marker":"${marker}"`);

async function streamLatencies(a: TestApp, b: TestApp, runId: string): Promise<number[]> {
  const append = appender(a);
  const stream = await openStream(b, runId);
  const latencies: number[] = [];
  try {
    for (let i = 0; i < WARM_UP_EVENTS + EVENTS; i++) {
      const marker = `stream-${i}`;
      const arrived = stream
        .next((e) => e.event === 'timeline' && hasMarker(e.data, marker), marker)
        .then(() => performance.now());
      const committed = await append(runId, marker);
      const at = await arrived;
      if (i >= WARM_UP_EVENTS) latencies.push(at - committed);
    }
  } finally {
    stream.close();
  }
  return latencies;
}

async function pollingLatencies(a: TestApp, b: TestApp, runId: string): Promise<number[]> {
  const append = appender(a);
  const api = apiClient(b.baseUrl, b.apiKey);
  const latencies: number[] = [];
  for (let i = 0; i < WARM_UP_EVENTS + EVENTS; i++) {
    const marker = `poll-${i}`;
    const committed = await append(runId, marker);
    for (;;) {
      const { body } = await api.get(`/agent/runs/${runId}/timeline`);
      const events = body.events as { payload?: { marker?: string } }[];
      if (events.some((e) => e.payload?.marker === marker)) break;
    }
    if (i >= WARM_UP_EVENTS) latencies.push(performance.now() - committed);
  }
  return latencies;
}

async function fanOut(a: TestApp, b: TestApp, runId: string): Promise<number[]> {
  const streams: SseStream[] = [];
  try {
    for (let i = 0; i < FAN_OUT_STREAMS; i++) streams.push(await openStream(b, runId));
    const arrivals = streams.map((stream) =>
      stream
        .next((e) => e.event === 'timeline' && hasMarker(e.data, 'fan-out'), 'the fan-out event')
        .then(() => performance.now()),
    );
    const committed = await appender(a)(runId, 'fan-out');
    return (await Promise.all(arrivals)).map((at) => at - committed);
  } finally {
    for (const stream of streams) stream.close();
  }
}

async function main(): Promise<void> {
  Logger.overrideLogger(['error']);
  // No model is ever called (no worker role), so the model URL only has to be well-formed.
  const env = createTestEnvironment('bench_stream', 'http://127.0.0.1:9/v1');
  // No worker: the run stays QUEUED and only the appended events change it.
  let a: TestApp | undefined;
  let b: TestApp | undefined;
  try {
    a = await startTestApp(env, ['api']);
    b = await startTestApp(env, ['api']);
    const api = apiClient(a.baseUrl, a.apiKey);
    const newRun = async (title: string) =>
      (await api.post('/agent/runs', { prompt: 'Streamed', title })).body.run_id as string;
    const load = () => loadavg()[0].toFixed(1);
    progress(`stream: ${EVENTS} events, replica A → stream on replica B (load ${load()})`);
    const streamed = await streamLatencies(a, b, await newRun('streamed'));
    progress(`polling baseline: ${EVENTS} events found by back-to-back GETs (load ${load()})`);
    const polled = await pollingLatencies(a, b, await newRun('polled'));
    progress(`fan-out: one event to ${FAN_OUT_STREAMS} streams (load ${load()})`);
    const fanned = await fanOut(a, b, await newRun('fan-out'));
    const row = (what: string, samples: number[]) => [
      what,
      ms(percentile(samples, 50)),
      ms(percentile(samples, 95)),
      ms(Math.max(...samples)),
    ];
    console.log(
      table([
        ['committed on replica A → seen on replica B', 'p50', 'p95', 'max'],
        row(`live stream (${EVENTS} events)`, streamed),
        row(`baseline: GET timeline back to back (${EVENTS} events)`, polled),
        row(`fan-out: one event, ${FAN_OUT_STREAMS} streams`, fanned),
      ]),
    );
    console.log(machineFacts().join('\n'));
  } finally {
    await b?.close();
    await a?.close();
    await env.destroy();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
