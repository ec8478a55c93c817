import { INestApplicationContext, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import type { DestinationStream } from 'pino';
import { AppModule } from '../app.module';
import type { AppConfig } from '../config/app-config';
import type { AmbientExtension } from '../extensions/extension.types';
import { ExtensionSet } from '../extensions/extension-set';
import { checkedExtension, loadExtensionModules } from '../extensions/load-extensions';
import { startIngress } from './start-ingress';
import { AmbientMetrics } from '../modules/metrics/ambient-metrics';
import { startMetricsServer } from '../modules/metrics/metrics-endpoint';
import { SandboxService } from '../modules/workers/sandbox/sandbox.service';
import type { ModelCatalog } from '../modules/models/model-catalog';
import { ModelsService } from '../modules/models/models.service';
import { BootstrapService } from '../modules/teams/bootstrap.service';
import { configureHttp } from './http';
import { PrototypedExpressAdapter } from './prototyped-express-adapter';
import { localBaseUrl } from '../common/http-listener';
import { answerClientErrorsAsProblems } from '../common/errors/client-error';
import { createObservability, Observability } from './observability';
import { checkBlobStore, checkRedis, prepareDatabase } from './preflight';
import { Readiness } from '../modules/health/readiness.service';
import { startHealthServer } from './health-server';
import { settlePublicUrls } from '../config/public-urls';

export interface AmbientProcess {
  app: INestApplicationContext;
  /** Base URL of the API role (`http://host:port/api/v1`), when this process serves it. */
  apiUrl: string | null;
  /** Base URL of the webhook ingress (`http://host:port`), when this process serves it. */
  ingressUrl: string | null;
  /** `http://host:port` of the health-only server (no api role, AMBIENT_HEALTH_PORT set). */
  healthUrl: string | null;
  /** Where Prometheus scrapes this process (`…/metrics`), when it is served. */
  metricsUrl: string | null;
  metrics: AmbientMetrics;
  /** The sandbox backend this process's workers use (null without the worker role's sandbox). */
  sandbox: string | null;
  /** What to fix so that runs start isolated (a missing image, no working backend), or null. */
  sandboxWarning: string | null;
  /** The model catalogue as this process loaded it (null for an ingress-only process). */
  models: ModelCatalog | null;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Where logs go instead of stdout (tests, benchmarks). */
  logDestination?: DestinationStream;
  /** Extensions registered beside the built-ins (and those AMBIENT_EXTENSIONS names). */
  extensions?: readonly AmbientExtension[];
  /** Where the extensions' settings are read (process.env unless given). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts the roles named in the config: checks MySQL and Redis, migrates, then boots one Nest
 * application (HTTP for the api role, a plain context for worker/scheduler-only processes), the
 * ingress application beside it, and the metrics listener unless AMBIENT_METRICS_PORT is off.
 */
export async function startAmbient(
  config: AppConfig,
  options: StartOptions = {},
): Promise<AmbientProcess> {
  // First: a bad extension module fails start-up before anything connects.
  const extensions = ExtensionSet.of(
    [
      ...(options.extensions ?? []).map(checkedExtension),
      ...loadExtensionModules(config.extensions),
    ],
    options.env,
  );
  extensions.sandboxBackendRegistry().checkSetting(config.sandbox.backend);
  await checkRedis(config.redis.url);
  // The ingress alone stores no blobs.
  if (!config.roles.every((role) => role === 'ingress')) await checkBlobStore(config);
  const observability = createObservability(config, options.logDestination);
  if (config.database.migrateOnStart) {
    const applied = await prepareDatabase(config);
    if (applied.length) new Logger('Migrations').log(`applied ${applied.join(', ')}`);
  }
  const closers: (() => Promise<void>)[] = [];
  const closeAll = async () => {
    for (const close of closers) await close();
    observability.log.flush();
  };
  try {
    // The ingress is a separate Nest application on its own port, beside (or instead of) the main one.
    const ingress = config.roles.includes('ingress')
      ? await startIngress(config, observability, extensions)
      : null;
    if (ingress) closers.push(() => ingress.app.close());
    const main = config.roles.every((role) => role === 'ingress')
      ? null
      : await startMain(config, observability, extensions);
    if (main) closers.push(main.close);
    const urlWarnings = settlePublicUrls(config, {
      api: main?.apiUrl ? portOf(main.apiUrl) : undefined,
      ingress: ingress ? portOf(ingress.url) : undefined,
    });
    urlWarnings.forEach((warning) => new Logger('PublicUrls').warn(warning));
    const { port: metricsPort, host: metricsHost, token: metricsToken } = config.metrics;
    const metricsServer =
      metricsPort === null
        ? null
        : await startMetricsServer(observability.metrics, {
            port: metricsPort,
            host: metricsHost,
            token: metricsToken,
          });
    if (metricsServer) closers.push(metricsServer.close);
    // Selected (and any problem logged as a warning) while the application started.
    const selected = main
      ? await main.app
          .get(SandboxService)
          .select()
          .catch(() => null)
      : null;
    return {
      app: (main ?? ingress)!.app,
      apiUrl: main?.apiUrl ?? null,
      ingressUrl: ingress?.url ?? null,
      healthUrl: main?.healthUrl ?? null,
      metricsUrl:
        metricsServer?.url ??
        (main?.apiUrl && metricsToken ? main.apiUrl.replace(/\/api\/v1$/, '/metrics') : null),
      metrics: observability.metrics,
      sandbox: selected?.description.backend ?? null,
      sandboxWarning: selected?.warning ?? null,
      models: main ? main.app.get(ModelsService).catalog : null,
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

interface MainApplication {
  app: INestApplicationContext;
  apiUrl: string | null;
  healthUrl: string | null;
  close(): Promise<void>;
}

/** The api, worker and scheduler roles: one Nest application (HTTP only with the api role). */
async function startMain(
  config: AppConfig,
  observability: Observability,
  extensions: ExtensionSet,
): Promise<MainApplication> {
  const module = AppModule.forConfig(config, observability.metrics, extensions);
  const logger = observability.nestLogger;
  if (!config.roles.includes('api')) {
    const app = await NestFactory.createApplicationContext(module, { logger });
    await initOrClose(app);
    const port = config.health?.port;
    const health =
      port === undefined
        ? null
        : await startHealthServer(app.get(Readiness), config.server.host, port).catch(
            async (err: Error) => {
              await app.close();
              throw new Error(`AMBIENT_HEALTH_PORT: cannot listen on ${port} (${err.message})`);
            },
          );
    if (health) new Logger('Health').log(`health probes on ${health.url}/api/v1/health/`);
    return {
      app,
      apiUrl: null,
      healthUrl: health?.url ?? null,
      close: async () => {
        await health?.close();
        await app.close();
      },
    };
  }
  const app = await NestFactory.create<NestExpressApplication>(
    module,
    new PrototypedExpressAdapter(),
    {
      logger,
      bodyParser: false,
    },
  );
  configureHttp(app, config, observability);
  answerClientErrorsAsProblems(app.getHttpServer());
  await initOrClose(app);
  await app.get(BootstrapService).ensureAccess();
  await app.listen(config.server.port, config.server.host);
  const address = app.getHttpServer().address() as { port: number };
  const apiUrl = `${localBaseUrl(config.server.host, address.port)}/api/v1`;
  // This process's own workers reach the API here (bridged into their sandboxes).
  config.server.internalApiUrl ??= apiUrl;
  return { app, apiUrl, healthUrl: null, close: () => app.close() };
}

/** The port of an `http://host:port…` listener URL (the URL leaves out 80). */
function portOf(url: string): number {
  return Number(new URL(url).port || 80);
}

/** A start-up check failing in a lifecycle hook (e.g. a queue without its processor) leaves nothing open. */
async function initOrClose(app: INestApplicationContext): Promise<void> {
  try {
    await app.init();
  } catch (err) {
    await app.close().catch(() => undefined);
    throw err;
  }
}
