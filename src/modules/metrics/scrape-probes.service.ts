import { getQueueToken } from '@nestjs/bull';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import type { DataSource } from 'typeorm';
import { backgroundConnections, mysqlPool } from '../../database/request-connections';
import { AmbientMetrics, QueueSnapshot } from './ambient-metrics';

/** The Bull queues whose gauges the main application reads at scrape time (by name). */
export const PROBED_QUEUES = Symbol('PROBED_QUEUES');

/**
 * The scrape-time queue gauges of the main application: per Bull queue, its job counts and the
 * age of the oldest waiting job (only the head of the waiting list is read, however long the
 * list), and what its MySQL pool's work outside requests holds and awaits. Runs per state are the
 * runs module's probe (RunGauges).
 */
@Injectable()
export class ScrapeProbes implements OnModuleInit, OnModuleDestroy {
  private queues: Queue[] = [];

  constructor(
    private readonly metrics: AmbientMetrics,
    private readonly moduleRef: ModuleRef,
    @Inject(PROBED_QUEUES) private readonly queueNames: readonly string[],
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  onModuleInit(): void {
    this.queues = this.queueNames.flatMap((name) => {
      try {
        return [this.moduleRef.get<Queue>(getQueueToken(name), { strict: false })];
      } catch {
        return []; // not registered in this process
      }
    });
    this.metrics.probes.queues = () => Promise.all(this.queues.map((q) => queueSnapshot(q)));
    const pool = mysqlPool(this.dataSource);
    this.metrics.probes.backgroundConnections = () => backgroundConnections(pool);
  }

  onModuleDestroy(): void {
    delete this.metrics.probes.queues;
    delete this.metrics.probes.backgroundConnections;
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
