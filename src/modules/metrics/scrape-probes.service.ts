import { getQueueToken } from '@nestjs/bull';
import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { RUN_STATES } from '../runs/run-state';
import { RUNS_QUEUE } from '../runs/run-queue.service';
import { DELIVERIES_QUEUE } from '../webhooks/delivery-evaluation.queue';
import { AmbientMetrics, QueueSnapshot } from './ambient-metrics';

/**
 * The scrape-time gauges of the main application: runs per state (one grouped query on the
 * state index) and, per Bull queue, its job counts and the age of the oldest waiting job (only
 * the head of the waiting list is read, however long the list).
 */
@Injectable()
export class ScrapeProbes implements OnModuleInit, OnModuleDestroy {
  private queues: Queue[] = [];

  constructor(
    private readonly metrics: AmbientMetrics,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    this.queues = [RUNS_QUEUE, DELIVERIES_QUEUE].flatMap((name) => {
      try {
        return [this.moduleRef.get<Queue>(getQueueToken(name), { strict: false })];
      } catch {
        return []; // not registered in this process
      }
    });
    this.metrics.probes.runsByState = () => this.runsByState();
    this.metrics.probes.queues = () => Promise.all(this.queues.map((q) => queueSnapshot(q)));
  }

  onModuleDestroy(): void {
    delete this.metrics.probes.runsByState;
    delete this.metrics.probes.queues;
  }

  private async runsByState(): Promise<Record<string, number>> {
    const rows = (await this.dataSource.query(
      'SELECT state, COUNT(*) AS n FROM runs GROUP BY state',
    )) as { state: string; n: string | number }[];
    const counts: Record<string, number> = Object.fromEntries(RUN_STATES.map((s) => [s, 0]));
    for (const row of rows) counts[row.state] = Number(row.n);
    return counts;
  }
}

/** Counts from Bull; the oldest waiting job is the tail of the wait list (jobs are LPUSHed). */
export async function queueSnapshot(queue: Queue, nowMs = Date.now()): Promise<QueueSnapshot> {
  const counts = await queue.getJobCounts();
  const oldestId = await queue.client.lindex(queue.toKey('wait'), -1);
  const oldest = oldestId ? await queue.getJob(oldestId) : null;
  return {
    queue: queue.name,
    waiting: counts.waiting,
    active: counts.active,
    delayed: counts.delayed,
    oldestWaitingAgeSeconds: oldest ? Math.max(0, (nowMs - oldest.timestamp) / 1000) : 0,
  };
}
