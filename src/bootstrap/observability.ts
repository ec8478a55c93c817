import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { DestinationStream } from 'pino';
import { PinoNestLogger } from '../common/logging/nest-logger';
import { createRootLogger, RootLogger } from '../common/logging/root-logger';
import { requestIdMiddleware } from '../common/request-id';
import type { AppConfig } from '../config/app-config';
import { AmbientMetrics } from '../modules/metrics/ambient-metrics';
import { httpObservationMiddleware } from '../modules/metrics/http-observation.middleware';

/** One process's logs and metrics, shared by its Nest applications (main and ingress). */
export interface Observability {
  log: RootLogger;
  nestLogger: PinoNestLogger;
  metrics: AmbientMetrics;
}

export function createObservability(
  config: AppConfig,
  logDestination?: DestinationStream,
): Observability {
  const log = createRootLogger(config, logDestination);
  const nestLogger = new PinoNestLogger(log.logger);
  // `new Logger(context)` anywhere (also before an application exists) writes through pino.
  Logger.overrideLogger(nestLogger);
  return { log, nestLogger, metrics: new AmbientMetrics() };
}

/**
 * First on every HTTP application: the request id (X-Request-Id, Error `trace_id`), its timing
 * under the route template, and its log line with the id bound to everything logged meanwhile.
 */
export function observeHttp(app: NestExpressApplication, observability: Observability): void {
  app.use(requestIdMiddleware);
  app.use(httpObservationMiddleware(observability.metrics, observability.log.logger));
}
