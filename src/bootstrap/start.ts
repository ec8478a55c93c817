import { INestApplicationContext, Logger, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from '../app.module';
import type { AppConfig } from '../config/app-config';
import { startIngress } from '../ingress/start-ingress';
import { BootstrapService } from '../modules/teams/bootstrap.service';
import { configureHttp } from './http';
import { answerClientErrorsAsProblems } from '../common/errors/client-error';
import { checkBlobStore, checkRedis, prepareDatabase } from './preflight';
import { Readiness } from '../modules/health/readiness.service';
import { startHealthServer } from './health-server';

export interface AmbientProcess {
  app: INestApplicationContext;
  /** Base URL of the API role (`http://host:port/api/v1`), when this process serves it. */
  apiUrl: string | null;
  /** Base URL of the webhook ingress (`http://host:port`), when this process serves it. */
  ingressUrl: string | null;
  /** `http://host:port` of the health-only server (no api role, AMBIENT_HEALTH_PORT set). */
  healthUrl?: string | null;
  close(): Promise<void>;
}

/**
 * Starts the roles named in the config: checks MySQL and Redis, migrates, then boots one Nest
 * application (HTTP for the api role, a plain context for worker/scheduler-only processes).
 */
export async function startAmbient(
  config: AppConfig,
  options: { logger?: LoggerService | LogLevel[] | false } = {},
): Promise<AmbientProcess> {
  await checkRedis(config.redis.url);
  // The ingress alone stores no blobs.
  if (!config.roles.every((role) => role === 'ingress')) await checkBlobStore(config);
  const logger = options.logger ?? ['log', 'warn', 'error'];
  if (config.database.migrateOnStart) {
    const applied = await prepareDatabase(config);
    const quiet = Array.isArray(logger) && !logger.includes('log');
    if (applied.length && !quiet) new Logger('Migrations').log(`applied ${applied.join(', ')}`);
  }
  // The ingress is a separate Nest application on its own port, beside (or instead of) the main one.
  const ingress = config.roles.includes('ingress') ? await startIngress(config, logger) : null;
  if (config.roles.every((role) => role === 'ingress')) {
    return {
      app: ingress!.app,
      apiUrl: null,
      ingressUrl: ingress!.url,
      close: () => ingress!.app.close(),
    };
  }
  const main = await startMain(config, logger).catch(async (err: unknown) => {
    await ingress?.app.close();
    throw err;
  });
  return {
    ...main,
    ingressUrl: ingress?.url ?? null,
    close: async () => {
      await ingress?.app.close();
      await main.app.close();
    },
  };
}

/** The api, worker and scheduler roles: one Nest application (HTTP only with the api role). */
async function startMain(
  config: AppConfig,
  logger: LoggerService | LogLevel[] | false,
): Promise<Omit<AmbientProcess, 'ingressUrl'>> {
  const module = AppModule.forConfig(config);
  if (!config.roles.includes('api')) {
    const app = await NestFactory.createApplicationContext(module, { logger });
    await app.init();
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
  const app = await NestFactory.create<NestExpressApplication>(module, {
    logger,
    bodyParser: false,
  });
  configureHttp(app, config);
  answerClientErrorsAsProblems(app.getHttpServer());
  await app.init();
  await app.get(BootstrapService).ensureAccess();
  await app.listen(config.server.port, config.server.host);
  const address = app.getHttpServer().address() as { port: number };
  const host = config.server.host === '0.0.0.0' ? '127.0.0.1' : config.server.host;
  const apiUrl = `http://${host}:${address.port}/api/v1`;
  // This process's own workers reach the API here (bridged into their sandboxes).
  config.server.internalApiUrl ??= apiUrl;
  return {
    app,
    apiUrl,
    close: () => app.close(),
  };
}
