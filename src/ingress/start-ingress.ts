import { INestApplication, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { ProblemFilter } from '../common/errors/problem.filter';
import { answerClientErrorsAsProblems } from '../common/errors/client-error';
import { Observability, observeHttp } from '../bootstrap/observability';
import type { AppConfig } from '../config/app-config';
import { localBaseUrl } from '../common/http-listener';
import type { AmbientExtension } from '../extensions/extension.types';
import { IngressModule } from './ingress.module';

export interface IngressServer {
  app: INestApplication;
  /** `http://host:port` the ingress listens on. */
  url: string;
}

/** Boots the ingress application on its own port (no body parser: bodies are read capped). */
export async function startIngress(
  config: AppConfig,
  observability: Observability,
  extensions: readonly AmbientExtension[] = [],
): Promise<IngressServer> {
  const module = IngressModule.forConfig(config, observability.metrics, extensions);
  const app = await NestFactory.create<NestExpressApplication>(module, {
    logger: observability.nestLogger,
    bodyParser: false,
  });
  app.disable('x-powered-by');
  app.disable('etag');
  observeHttp(app, observability);
  app.useGlobalFilters(new ProblemFilter());
  answerClientErrorsAsProblems(app.getHttpServer());
  if (!config.secretsKey) {
    new Logger('Ingress').warn('AMBIENT_SECRETS_KEY is not set: webhooks cannot be verified');
  }
  await app.listen(config.ingress.port, config.ingress.host);
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, url: localBaseUrl(config.ingress.host, port) };
}
