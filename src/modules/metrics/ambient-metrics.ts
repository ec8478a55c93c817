import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BackgroundConnections } from '../../database/request-connections';

/** Run durations span seconds to hours. */
const RUN_SECONDS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200];
/** Queue-to-start latency: milliseconds when idle, minutes under a backlog. */
const QUEUE_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];
const HTTP_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Sandbox hand-out: milliseconds from a warm pool, seconds when a container is made. */
const HANDOUT_SECONDS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Read at scrape time; each is set by the component that knows the answer, when it runs here. */
export interface ScrapeProbes {
  /** Runs per state (the whole deployment, from MySQL). */
  runsByState?: () => Promise<Record<string, number>>;
  /** Per Bull queue: jobs waiting, active and delayed, and the age of the oldest waiting job. */
  queues?: () => Promise<QueueSnapshot[]>;
  /** Self-hosted worker connections this process holds. */
  workersConnected?: () => number;
  /** The main pool's connections held and awaited by work outside requests (null: none kept). */
  backgroundConnections?: () => BackgroundConnections | null;
}

export interface QueueSnapshot {
  queue: string;
  waiting: number;
  active: number;
  delayed: number;
  oldestWaitingAgeSeconds: number;
}

/**
 * Every Prometheus series of one Ambient process (the names are a contract: the Grafana dashboard
 * and the alert rules use them), on a registry of its own — several processes' worth may live in
 * one test process. Components count through the methods here, never through prom-client.
 */
export class AmbientMetrics {
  readonly registry = new Registry();
  readonly probes: ScrapeProbes = {};

  private readonly httpDuration = new Histogram({
    name: 'ambient_http_request_duration_seconds',
    help: 'HTTP requests (API and webhook ingress) by route template, method and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: HTTP_SECONDS,
    registers: [this.registry],
  });
  private readonly runsCreated = new Counter({
    name: 'ambient_runs_created_total',
    help: 'Runs created, by source',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  private readonly runDuration = new Histogram({
    name: 'ambient_run_duration_seconds',
    help: 'Time from creation to a terminal state, by outcome (the terminal state)',
    labelNames: ['outcome'] as const,
    buckets: RUN_SECONDS,
    registers: [this.registry],
  });
  private readonly queueToStart = new Histogram({
    name: 'ambient_run_queue_to_start_seconds',
    help: 'Time from creation to the start of the first execution, by outcome',
    labelNames: ['outcome'] as const,
    buckets: QUEUE_SECONDS,
    registers: [this.registry],
  });
  private readonly deliveries = new Counter({
    name: 'ambient_webhook_deliveries_total',
    help: 'Webhook deliveries by delivery-log status (accepted, duplicate, rejected_*)',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  private readonly rateLimited = new Counter({
    name: 'ambient_webhook_rate_limited_total',
    help: 'Webhook requests refused with 429, by budget (deliveries, auth_failures)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  private readonly scheduleFirings = new Counter({
    name: 'ambient_schedule_firings_total',
    help: 'Schedule ticks claimed, by outcome (fired, skipped)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly sandboxHandouts = new Counter({
    name: 'ambient_sandbox_pool_handouts_total',
    help: 'Sandboxes opened, by how their container was had (hit: warm pool; miss: made, the pool had none ready; bypass: made, the pool does not serve such sandboxes)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  private readonly sandboxHandoutSeconds = new Histogram({
    name: 'ambient_sandbox_handout_seconds',
    help: 'Time from opening a sandbox to its container being ready for commands, by result (as ambient_sandbox_pool_handouts_total)',
    labelNames: ['result'] as const,
    buckets: HANDOUT_SECONDS,
    registers: [this.registry],
  });
  private readonly sandboxFailedHandoutSeconds = new Histogram({
    name: 'ambient_sandbox_failed_handout_seconds',
    help: 'Time from opening a sandbox to its container failing to start, or to the sandbox being closed before it started (a cancelled run), by result (as ambient_sandbox_pool_handouts_total)',
    labelNames: ['result'] as const,
    buckets: HANDOUT_SECONDS,
    registers: [this.registry],
  });
  private readonly sandboxReturns = new Counter({
    name: 'ambient_sandbox_pool_returns_total',
    help: "Closed sandboxes' pooled containers, by what became of them (reused: back in the pool; any other outcome: removed, and why)",
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly egressRequests = new Counter({
    name: 'ambient_egress_requests_total',
    help: "Requests and tunnels sandboxes made through their execution's egress proxy, by its decision (allowed, denied)",
    labelNames: ['decision'] as const,
    registers: [this.registry],
  });
  private readonly workerDisconnects = new Counter({
    name: 'ambient_self_hosted_worker_disconnects_total',
    help: 'Self-hosted worker connections that ended',
    registers: [this.registry],
  });
  private readonly staleWrites = new Counter({
    name: 'ambient_stale_execution_writes_total',
    help: 'Writes refused because their execution no longer held the run (fencing), by what was written',
    labelNames: ['write'] as const,
    registers: [this.registry],
  });
  private readonly modelTokens = new Counter({
    name: 'ambient_model_tokens_total',
    help: 'Model tokens used by runs, by model and kind (input, output)',
    labelNames: ['model', 'kind'] as const,
    registers: [this.registry],
  });
  private readonly accessDenials = new Counter({
    name: 'ambient_access_denied_total',
    help: 'Authenticated requests refused with 403 by the permission guard, by permission and role',
    labelNames: ['permission', 'role'] as const,
    registers: [this.registry],
  });
  private readonly modelCost = new Counter({
    name: 'ambient_model_cost_usd_total',
    help: 'Inference cost of runs in USD (catalogue prices), by model',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });

  private readonly runCost = new Counter({
    name: 'ambient_run_cost_usd_total',
    help:
      'Cost of runs in USD (inference at catalogue prices plus compute), by team and catalogue ' +
      'model ("other" for a model not in the catalogue)',
    labelNames: ['team', 'model'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'ambient_' });
    const probes = this.probes;
    new Gauge({
      name: 'ambient_runs',
      help: 'Runs by state (deployment-wide, read from MySQL at scrape time: aggregate with max)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      async collect() {
        if (!probes.runsByState) return;
        const counts = await probes.runsByState();
        this.reset();
        for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
      },
    });
    // Both queue gauges come from one read of Bull per scrape (prom-client collects them together).
    let snapshot: { at: number; queues: Promise<QueueSnapshot[]> } | null = null;
    const queues = (): Promise<QueueSnapshot[]> => {
      if (!probes.queues) return Promise.resolve([]);
      if (!snapshot || Date.now() - snapshot.at > 1000) {
        snapshot = { at: Date.now(), queues: probes.queues() };
      }
      return snapshot.queues;
    };
    new Gauge({
      name: 'ambient_queue_jobs',
      help: 'Bull jobs by queue and state (waiting, active, delayed; deployment-wide: aggregate with max)',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        const snapshots = await queues();
        this.reset();
        for (const q of snapshots) {
          this.set({ queue: q.queue, state: 'waiting' }, q.waiting);
          this.set({ queue: q.queue, state: 'active' }, q.active);
          this.set({ queue: q.queue, state: 'delayed' }, q.delayed);
        }
      },
    });
    new Gauge({
      name: 'ambient_queue_oldest_job_age_seconds',
      help: 'Age of the oldest waiting job per queue (0 when none waits)',
      labelNames: ['queue'] as const,
      registers: [this.registry],
      async collect() {
        const snapshots = await queues();
        this.reset();
        for (const q of snapshots) this.set({ queue: q.queue }, q.oldestWaitingAgeSeconds);
      },
    });
    new Gauge({
      name: 'ambient_db_background_connections',
      help:
        "MySQL connections of this process's main pool held by work outside HTTP requests (run " +
        'executions, schedules, sweepers), the most it may hold (the pool less the fifth kept for ' +
        'requests), and its acquisitions waiting; absent where the pool keeps none',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const pool = probes.backgroundConnections?.();
        this.reset();
        if (!pool) return;
        this.set({ state: 'in_use' }, pool.inUse);
        this.set({ state: 'limit' }, pool.limit);
        this.set({ state: 'waiting' }, pool.waiting);
      },
    });
    new Gauge({
      name: 'ambient_db_background_oldest_wait_seconds',
      help:
        'How long the longest-waiting acquisition of work outside HTTP requests has waited for a ' +
        "connection of this process's main MySQL pool (0 when none waits)",
      registers: [this.registry],
      collect() {
        this.set(probes.backgroundConnections?.()?.oldestWaitSeconds ?? 0);
      },
    });
    new Gauge({
      name: 'ambient_self_hosted_workers_connected',
      help: 'Self-hosted worker connections held by this process',
      registers: [this.registry],
      collect() {
        this.set(probes.workersConnected?.() ?? 0);
      },
    });
  }

  /** Prometheus text of every series (scrape-time gauges read first). */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  httpRequest(method: string, route: string, statusCode: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status_code: statusCode }, seconds);
  }

  runCreated(source: string): void {
    this.runsCreated.inc({ source });
  }

  /** A run reached a terminal state (`outcome`). */
  runEnded(outcome: string, createdAt: Date, startedAt: Date | null, endedAt: Date): void {
    this.runDuration.observe({ outcome }, secondsBetween(createdAt, endedAt));
    if (startedAt) this.queueToStart.observe({ outcome }, secondsBetween(createdAt, startedAt));
  }

  webhookDelivery(status: string): void {
    this.deliveries.inc({ status });
  }

  webhookRateLimited(reason: 'deliveries' | 'auth_failures'): void {
    this.rateLimited.inc({ reason });
  }

  scheduleFiring(outcome: 'fired' | 'skipped', count = 1): void {
    if (count > 0) this.scheduleFirings.inc({ outcome }, count);
  }

  sandboxReturn(outcome: string): void {
    this.sandboxReturns.inc({ outcome });
  }

  sandboxHandout(result: 'hit' | 'miss' | 'bypass', seconds: number): void {
    this.sandboxHandouts.inc({ result });
    this.sandboxHandoutSeconds.observe({ result }, seconds);
  }

  sandboxHandoutFailed(result: 'hit' | 'miss' | 'bypass', seconds: number): void {
    this.sandboxFailedHandoutSeconds.observe({ result }, seconds);
  }

  egressRequest(decision: 'allowed' | 'denied', count = 1): void {
    if (count > 0) this.egressRequests.inc({ decision }, count);
  }

  workerDisconnected(): void {
    this.workerDisconnects.inc();
  }

  /** An execution that lost its run tried to write `write` (message, event, state…); refused. */
  staleExecutionWrite(write: string): void {
    this.staleWrites.inc({ write });
  }

  /** A caller with `role` asked for what `permission` guards and was refused. */
  accessDenied(permission: string, role: string): void {
    this.accessDenials.inc({ permission, role });
  }

  modelUsage(model: string, inputTokens: number, outputTokens: number, costUsd: number): void {
    if (inputTokens > 0) this.modelTokens.inc({ model, kind: 'input' }, inputTokens);
    if (outputTokens > 0) this.modelTokens.inc({ model, kind: 'output' }, outputTokens);
    if (costUsd > 0) this.modelCost.inc({ model }, costUsd);
  }

  /**
   * A team's run was charged `costUsd` more. `catalogModel` is a catalogue id or null, so the
   * series stay bounded by teams × catalogue models whatever model ids runs were created with.
   */
  teamRunCost(team: string, catalogModel: string | null, costUsd: number): void {
    if (costUsd > 0) this.runCost.inc({ team, model: catalogModel ?? 'other' }, costUsd);
  }
}

function secondsBetween(from: Date, to: Date): number {
  return Math.max(0, (to.getTime() - from.getTime()) / 1000);
}
