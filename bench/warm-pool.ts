import Dockerode from 'dockerode';
import { once } from 'node:events';
import type { Counter, Histogram } from 'prom-client';
import type { AppConfig } from '../src/config/app-config';
import { SandboxService } from '../src/modules/workers';
import { sweepContainers } from '../src/modules/workers/sandbox/backends/docker/container-sweep';
import { DockerHost } from '../src/modules/workers/sandbox/backends/docker/docker-host';
import { DockerSandboxBackend } from '../src/modules/workers/sandbox/backends/docker/docker-sandbox';
import { deploymentName } from '../src/modules/workers/sandbox/sandbox.service';
import type { AmbientMetrics } from '../src/modules/metrics';
import { removeSnapshotImagesOf } from '../test/support/docker-sandbox';
import type { TestApp } from '../test/support/test-app';

export type WarmPool = NonNullable<DockerSandboxBackend['pool']>;

/** The warm pool of the app's docker backend (its worker role in this process), or null. */
export async function warmPoolOf(app: TestApp): Promise<WarmPool | null> {
  const { backend } = await app.ambient.app.get(SandboxService).select();
  return backend instanceof DockerSandboxBackend ? backend.pool : null;
}

/**
 * Removes what the bench's Ambient processes left of their deployment's containers once every
 * one of them is closed, as the next worker's sweep would: a shutdown's drain stops after 30 s
 * (a worker SIGTERMed right after a burst of 100 has 200 containers to remove), and a bench has
 * no next worker. Returns how many there were.
 */
export async function removeLeftContainers(config: AppConfig): Promise<number> {
  const host = new DockerHost(new Dockerode(), config.sandbox, deploymentName(config));
  return sweepContainers(
    host,
    () => Promise.resolve(false),
    () => false,
  );
}

/** The deployment's snapshot images removed (see removeSnapshotImagesOf); how many went. */
export function removeSnapshotImages(config: AppConfig): Promise<number> {
  return removeSnapshotImagesOf(deploymentName(config));
}

/** Resolves once the pool holds `count` ready containers of `image`; rejects after `timeoutMs`. */
export async function poolFilled(
  pool: WarmPool,
  image: string,
  count: number,
  timeoutMs: number,
): Promise<void> {
  const timeout = setTimeout(
    () => pool.emit('error', new Error(`the pool did not fill to ${count} in ${timeoutMs} ms`)),
    timeoutMs,
  );
  try {
    while (pool.readyCount(image) < count) await once(pool, 'filled');
  } finally {
    clearTimeout(timeout);
  }
}

/** Sandbox hand-outs by result (hit, miss, bypass): how many, and their mean open → ready. */
export type Handouts = Record<string, { count: number; meanMs: number }>;

/**
 * The hand-outs `ambient_sandbox_handout_seconds` has counted in this process; with `since`
 * (an earlier reading), only those after it.
 */
export async function handoutStats(
  metrics: AmbientMetrics,
  since: Handouts = {},
): Promise<Handouts> {
  const histogram = metrics.registry.getSingleMetric('ambient_sandbox_handout_seconds') as
    Histogram | undefined;
  const values = (await histogram?.get())?.values ?? [];
  const stats: Handouts = {};
  for (const result of ['hit', 'miss', 'bypass']) {
    const of = (suffix: string): number =>
      values.find((v) => v.metricName?.endsWith(suffix) && v.labels.result === result)?.value ?? 0;
    const before = since[result] ?? { count: 0, meanMs: 0 };
    const count = of('_count') - before.count;
    const sumMs = of('_sum') * 1000 - before.count * before.meanMs;
    if (count > 0) stats[result] = { count, meanMs: sumMs / count };
  }
  return stats;
}

export function describeHandouts(handouts: Handouts): string {
  const entries = Object.entries(handouts);
  if (entries.length === 0) return 'none';
  return entries
    .map(([result, s]) => `${result} ×${s.count} (${s.meanMs.toFixed(0)} ms)`)
    .join(', ');
}

/**
 * What became of closed sandboxes' containers (`ambient_sandbox_pool_returns_total`), by outcome;
 * with `since` (an earlier reading), only since then.
 */
export async function returnStats(
  metrics: AmbientMetrics,
  since: Record<string, number> = {},
): Promise<Record<string, number>> {
  const counter = metrics.registry.getSingleMetric('ambient_sandbox_pool_returns_total') as
    Counter | undefined;
  const stats: Record<string, number> = {};
  for (const { labels, value } of (await counter?.get())?.values ?? []) {
    const outcome = String(labels.outcome);
    const count = value - (since[outcome] ?? 0);
    if (count > 0) stats[outcome] = count;
  }
  return stats;
}

export function describeReturns(returns: Record<string, number>): string {
  const entries = Object.entries(returns);
  if (entries.length === 0) return 'none counted';
  return entries.map(([outcome, count]) => `${outcome} ×${count}`).join(', ');
}
