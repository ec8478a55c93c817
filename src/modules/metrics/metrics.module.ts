import { DynamicModule, Global, Module } from '@nestjs/common';
import { AmbientMetrics } from './ambient-metrics';
import { PROBED_QUEUES, ScrapeProbes } from './scrape-probes.service';

/**
 * Makes the process's AmbientMetrics injectable in an application (the main one and the
 * ingress share one instance, so one scrape shows both). `probedQueues` adds the scrape-time
 * gauges of those Bull queues: once per process, in the main application (null: none).
 */
@Global()
@Module({})
export class MetricsModule {
  static forInstance(
    metrics: AmbientMetrics,
    probedQueues: readonly string[] | null,
  ): DynamicModule {
    return {
      module: MetricsModule,
      providers: [
        { provide: AmbientMetrics, useValue: metrics },
        ...(probedQueues ? [{ provide: PROBED_QUEUES, useValue: probedQueues }, ScrapeProbes] : []),
      ],
      exports: [AmbientMetrics],
    };
  }
}
