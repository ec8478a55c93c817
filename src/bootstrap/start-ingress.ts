import { DynamicModule, INestApplication, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { ProblemFilter } from '../common/errors/problem.filter';
import { answerClientErrorsAsProblems } from '../common/errors/client-error';
import { Observability, observeHttp } from './observability';
import type { AppConfig } from '../config/app-config';
import { localBaseUrl } from '../common/http-listener';
import type { ExtensionSet } from '../extensions/extension-set';
import { IngressModule } from '../ingress/ingress.module';
import { infrastructureImports } from './infrastructure';
import { PrototypedExpressAdapter } from './prototyped-express-adapter';

export interface IngressServer {
  app: INestApplication;
  /** `http://host:port` the ingress listens on. */
  url: string;
}

/** Boots the ingress application on its own port (no body parser: bodies are read capped). */
export async function startIngress(
  config: AppConfig,
  observability: Observability,
  extensions: ExtensionSet,
): Promise<IngressServer> {
  const module = IngressApplication.forConfig(config, observability, extensions);
  const app = await NestFactory.create<NestExpressApplication>(
    module,
    new PrototypedExpressAdapter(),
    {
      logger: observability.nestLogger,
      bodyParser: false,
    },
  );
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

/** The ingress application's root: the infrastructure every Ambient application stands on, and the ingress. */
@Module({})
class IngressApplication {
  static forConfig(
    config: AppConfig,
    observability: Observability,
    extensions: ExtensionSet,
  ): DynamicModule {
    return {
      module: IngressApplication,
      imports: [
        ...infrastructureImports(config, {
          metrics: observability.metrics,
          probedQueues: null,
          extensions,
          servesHttp: true,
        }),
        IngressModule,
      ],
    };
  }
}
