import { INestApplication, Logger, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { ProblemFilter } from '../common/errors/problem.filter';
import { answerClientErrorsAsProblems } from '../common/errors/client-error';
import { requestIdMiddleware } from '../common/request-id';
import type { AppConfig } from '../config/app-config';
import { IngressModule } from './ingress.module';

export interface IngressServer {
  app: INestApplication;
  /** `http://host:port` the ingress listens on. */
  url: string;
}

/** Boots the ingress application on its own port (no body parser: bodies are read capped). */
export async function startIngress(
  config: AppConfig,
  logger: LoggerService | LogLevel[] | false,
): Promise<IngressServer> {
  const app = await NestFactory.create<NestExpressApplication>(IngressModule.forConfig(config), {
    logger,
    bodyParser: false,
  });
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(requestIdMiddleware);
  app.useGlobalFilters(new ProblemFilter());
  answerClientErrorsAsProblems(app.getHttpServer());
  if (!config.secretsKey) {
    new Logger('Ingress').warn('AMBIENT_SECRETS_KEY is not set: webhooks cannot be verified');
  }
  await app.listen(config.ingress.port, config.ingress.host);
  const { port } = app.getHttpServer().address() as { port: number };
  const host = config.ingress.host === '0.0.0.0' ? '127.0.0.1' : config.ingress.host;
  new Logger('Ingress').log(`webhook ingress on http://${host}:${port}`);
  return { app, url: `http://${host}:${port}` };
}
