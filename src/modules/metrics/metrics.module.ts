import { DynamicModule, Global, Module } from '@nestjs/common';
import { AmbientMetrics } from './ambient-metrics';
import { ScrapeProbes } from './scrape-probes.service';

/**
 * Makes the process's AmbientMetrics injectable in an application (the main one and the
 * ingress share one instance, so one scrape shows both). `withProbes` adds the scrape-time
 * gauges that read MySQL and Bull: once per process, in the main application.
 */
@Global()
@Module({})
export class MetricsModule {
  static forInstance(metrics: AmbientMetrics, withProbes: boolean): DynamicModule {
    return {
      module: MetricsModule,
      providers: [
        { provide: AmbientMetrics, useValue: metrics },
        ...(withProbes ? [ScrapeProbes] : []),
      ],
      exports: [AmbientMetrics],
    };
  }
}
