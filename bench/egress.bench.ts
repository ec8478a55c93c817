import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request, type IncomingMessage } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { connectThrough } from '../test/support/egress-upstreams';
import type { ProxyProcessConfig } from './egress-process';
import { loadAverage, machineFacts } from './machine';
import { median, ms, percentile, table } from './stats';

/**
 * `npm run bench:egress`: what the per-execution egress proxy adds. An HTTPS upstream, the proxy
 * and this client run in three processes. For each path, direct and proxied requests alternate
 * (the same load on both): a new connection per request (TCP + TLS + one GET, as `curl` does),
 * keep-alive (one connection, requests back to back), and a large download twice: unpaced (on
 * loopback, CPU-bound on both ends) and paced by the upstream to BENCH_EGRESS_RATE_MBIT (as a
 * download from the internet arrives through a NIC). The proxied paths:
 * a CONNECT tunnel (a host without bound secrets or method rules) and an intercepted host (a
 * bound secret: the proxy terminates TLS with its execution CA and forwards). A benchmark, not
 * a test.
 */

const REQUESTS = Number(process.env.BENCH_EGRESS_REQUESTS ?? 300);
const WARM_UP = 20;
const DOWNLOAD_MIB = Number(process.env.BENCH_EGRESS_DOWNLOAD_MIB ?? 200);
const DOWNLOAD_ROUNDS = Number(process.env.BENCH_EGRESS_DOWNLOAD_ROUNDS ?? 5);
/** The paced download's line rate: 1000 is a typical cloud VM's 1 Gbit/s NIC. */
const RATE_MBIT = Number(process.env.BENCH_EGRESS_RATE_MBIT ?? 1000);
const PACED_BYTES_PER_SECOND = Math.round((RATE_MBIT * 1e6) / 8);

function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

function start<T>(args: string[]): Promise<{ child: ChildProcess; ready: T }> {
  const child = fork(join(__dirname, 'egress-process.ts'), args, {
    execArgv: ['-r', '@swc-node/register'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (ready) => resolve({ child, ready: ready as T }));
    child.once('exit', (code) => reject(new Error(`egress bench process exited with ${code}`)));
  });
}

interface Route {
  name: string;
  host: string;
  ca: string[];
  /** A connected socket to TLS over: TCP to the upstream, or a tunnel through the proxy. */
  open: () => Promise<Duplex>;
}

function tlsOver(socket: Duplex, servername: string, ca: string[]): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const tls = tlsConnect({ socket, servername, ca, ALPNProtocols: ['http/1.1'] }, () =>
      resolve(tls),
    );
    tls.once('error', reject);
  });
}

/** One GET over `socket`; resolves with the body's size once it is all read. */
function get(socket: Duplex, host: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({
      createConnection: () => socket as Socket,
      path,
      headers: {
        host,
        connection: 'keep-alive',
        authorization: 'Bearer ambient-placeholder-BENCH_TOKEN',
      },
    });
    req.on('response', (res: IncomingMessage) => {
      let size = 0;
      res.on('data', (chunk: Buffer) => (size += chunk.length));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(size) : reject(new Error(`${res.statusCode}`)),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function fresh(route: Route): Promise<number> {
  const started = performance.now();
  const tls = await tlsOver(await route.open(), route.host, route.ca);
  await get(tls, route.host, '/');
  const elapsed = performance.now() - started;
  tls.destroy();
  return elapsed;
}

/** Alternates `a` and `b` (which goes first alternating too); the samples of each. */
async function alternate(
  a: () => Promise<number>,
  b: () => Promise<number>,
  count: number,
): Promise<[number[], number[]]> {
  const as: number[] = [];
  const bs: number[] = [];
  for (let i = 0; i < WARM_UP + count; i++) {
    const [first, second] = i % 2 === 0 ? [a, b] : [b, a];
    const one = await first();
    const two = await second();
    if (i < WARM_UP) continue;
    (i % 2 === 0 ? as : bs).push(one);
    (i % 2 === 0 ? bs : as).push(two);
  }
  return [as, bs];
}

async function keepAlive(route: Route): Promise<() => Promise<number>> {
  const tls = await tlsOver(await route.open(), route.host, route.ca);
  return async () => {
    const started = performance.now();
    await get(tls, route.host, '/');
    return performance.now() - started;
  };
}

/** CPU time (user + system, ms) `child` has spent so far. */
function cpuOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const onMessage = (message: { cpu?: NodeJS.CpuUsage }) => {
      if (!message.cpu) return;
      child.off('message', onMessage);
      resolve((message.cpu.user + message.cpu.system) / 1000);
    };
    child.on('message', onMessage);
    child.send('cpu');
  });
}

/** MiB/s of one download; `rate` (bytes per second) paces the upstream, null sends at once. */
async function download(route: Route, rate: number | null): Promise<number> {
  const bytes = DOWNLOAD_MIB * 1024 * 1024;
  const tls = await tlsOver(await route.open(), route.host, route.ca);
  const started = performance.now();
  const size = await get(tls, route.host, `/bytes/${bytes}${rate ? `?rate=${rate}` : ''}`);
  const seconds = (performance.now() - started) / 1000;
  tls.destroy();
  if (size !== bytes) throw new Error(`downloaded ${size} of ${bytes} bytes`);
  return bytes / 1024 / 1024 / seconds;
}

type DownloadPath = 'direct' | 'tunnel' | 'intercepted';

/**
 * DOWNLOAD_ROUNDS downloads per path, the paths' order rotating each round; the table of
 * speeds, ratios to direct and the proxy's CPU per GiB (markdown, with its caption).
 */
async function measureDownloads(
  proxy: ChildProcess,
  paths: [DownloadPath, Route][],
  rate: number | null,
): Promise<string> {
  const line = rate
    ? `paced by the upstream to ${RATE_MBIT} Mbit/s (${(rate / 1024 / 1024).toFixed(1)} MiB/s)`
    : 'unpaced (CPU-bound on loopback)';
  progress(`download ${DOWNLOAD_MIB} MiB × ${DOWNLOAD_ROUNDS} per path, ${line}`);
  const speeds: Record<DownloadPath, number[]> = { direct: [], tunnel: [], intercepted: [] };
  const proxyCpuMs: Record<DownloadPath, number> = { direct: 0, tunnel: 0, intercepted: 0 };
  for (let round = 0; round < DOWNLOAD_ROUNDS; round++) {
    // Each round starts with another path, so that none always runs first.
    for (let i = 0; i < paths.length; i++) {
      const [name, route] = paths[(round + i) % paths.length];
      const cpuBefore = await cpuOf(proxy);
      speeds[name].push(await download(route, rate));
      proxyCpuMs[name] += (await cpuOf(proxy)) - cpuBefore;
    }
  }
  // On a shared machine a round's speed depends on what else runs; the best round is the
  // nearest to what the path can do, the median what it did.
  const rows = [
    [
      'download',
      'MiB/s median',
      'best',
      'rounds',
      'of direct (median / best)',
      'target',
      'proxy CPU per GiB',
    ],
  ];
  const mib = DOWNLOAD_MIB * DOWNLOAD_ROUNDS;
  const best = (values: number[]) => Math.max(...values);
  for (const [name, values] of Object.entries(speeds) as [DownloadPath, number[]][]) {
    const proxiedPath = name !== 'direct';
    const ratio = (of: (v: number[]) => number) =>
      `${((of(values) / of(speeds.direct)) * 100).toFixed(0)} %`;
    rows.push([
      name,
      median(values).toFixed(0),
      best(values).toFixed(0),
      values.map((v) => v.toFixed(0)).join(' / '),
      proxiedPath ? `${ratio(median)} / ${ratio(best)}` : '',
      proxiedPath ? '≥ 80 %' : '',
      proxiedPath ? `${((proxyCpuMs[name] / mib) * 1024).toFixed(0)} ms` : '',
    ]);
  }
  return `\n${DOWNLOAD_MIB} MiB over HTTPS, ${line}:\n\n${table(rows)}\n`;
}

async function main(): Promise<void> {
  const facts = machineFacts();
  const dir = await mkdtemp(join(tmpdir(), 'egress-bench-'));
  const socketPath = join(dir, 'egress.sock');
  const upstreams = await start<{ httpsPort: number; caPem: string }>(['upstreams']);
  const config: ProxyProcessConfig = {
    socketPath,
    httpsPort: upstreams.ready.httpsPort,
    upstreamCa: upstreams.ready.caPem,
  };
  const proxy = await start<{ caPem: string }>(['proxy', JSON.stringify(config)]);
  const port = upstreams.ready.httpsPort;
  const direct = (host: string): Route => ({
    name: 'direct',
    host,
    ca: [upstreams.ready.caPem],
    open: () =>
      new Promise((resolve, reject) => {
        const socket = netConnect({ host: '127.0.0.1', port }, () => resolve(socket));
        socket.setNoDelay(true);
        socket.once('error', reject);
      }),
  });
  const proxied = (host: string, ca: string): Route => ({
    name: host,
    host,
    ca: [ca],
    open: async () => {
      const tunnel = await connectThrough(socketPath, `${host}:${port}`);
      if (!('socket' in tunnel)) throw new Error(`refused: ${tunnel.refused.body}`);
      tunnel.socket.setNoDelay(true);
      return tunnel.socket;
    },
  });
  const tunnel = proxied('tunnel.bench', upstreams.ready.caPem);
  const intercepted = proxied('intercept.bench', proxy.ready.caPem);
  const paths: [DownloadPath, Route][] = [
    ['direct', direct('tunnel.bench')],
    ['tunnel', tunnel],
    ['intercepted', intercepted],
  ];

  const rows: string[][] = [
    ['path', 'direct p50 / p95', 'proxied p50 / p95', 'added p50', 'target', 'proxy CPU / request'],
  ];
  /** Runs `alternate` and adds its row, with the proxy's CPU time per proxied request. */
  const measure = async (
    label: string,
    target: string,
    base: () => Promise<number>,
    via: () => Promise<number>,
  ) => {
    const cpuBefore = await cpuOf(proxy.child);
    const [baseSamples, viaSamples] = await alternate(
      () =>
        base().catch((err: Error) => Promise.reject(new Error(`${label}, direct: ${err.message}`))),
      () =>
        via().catch((err: Error) => Promise.reject(new Error(`${label}, proxied: ${err.message}`))),
      REQUESTS,
    );
    const cpuPerRequest = ((await cpuOf(proxy.child)) - cpuBefore) / (REQUESTS + WARM_UP);
    rows.push([
      label,
      `${ms(median(baseSamples))} / ${ms(percentile(baseSamples, 95))}`,
      `${ms(median(viaSamples))} / ${ms(percentile(viaSamples, 95))}`,
      ms(median(viaSamples) - median(baseSamples)),
      target,
      ms(cpuPerRequest),
    ]);
  };
  try {
    progress(`tunnel, new connection per request (${REQUESTS})`);
    await measure(
      'tunnel, new connection',
      '≤ 5 ms',
      () => fresh(direct('tunnel.bench')),
      () => fresh(tunnel),
    );
    progress(`intercepted, new connection per request (${REQUESTS})`);
    await measure(
      'intercepted, new connection',
      '≤ 15 ms',
      () => fresh(direct('intercept.bench')),
      () => fresh(intercepted),
    );
    progress(`keep-alive (${REQUESTS} each)`);
    await measure(
      'tunnel, keep-alive',
      '≤ 5 ms',
      await keepAlive(direct('tunnel.bench')),
      await keepAlive(tunnel),
    );
    await measure(
      'intercepted, keep-alive',
      '≤ 15 ms',
      await keepAlive(direct('intercept.bench')),
      await keepAlive(intercepted),
    );

    const downloads = [
      await measureDownloads(proxy.child, paths, null),
      await measureDownloads(proxy.child, paths, PACED_BYTES_PER_SECOND),
    ];
    facts.push(`load average at end: ${loadAverage()}`);
    process.stdout.write(
      `\n## Egress proxy\n\n${facts.map((f) => `- ${f}`).join('\n')}\n\n` +
        `HTTPS GET of a small body, ${REQUESTS} each, direct and proxied alternating:\n\n${table(rows)}\n` +
        downloads.join(''),
    );
  } finally {
    upstreams.child.kill();
    proxy.child.kill();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
