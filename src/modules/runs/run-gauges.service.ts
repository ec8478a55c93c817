import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { AmbientMetrics } from '../metrics';
import { RunStateCountRepository } from './run-state-count.repository';

/** The scrape-time gauge of runs per state (`ambient_runs`), read from MySQL. */
@Injectable()
export class RunGauges implements OnModuleInit, OnModuleDestroy {
  constructor(
    private readonly metrics: AmbientMetrics,
    private readonly records: RunStateCountRepository,
  ) {}

  onModuleInit(): void {
    this.metrics.probes.runsByState = () => this.records.countByState();
  }

  onModuleDestroy(): void {
    delete this.metrics.probes.runsByState;
  }
}
