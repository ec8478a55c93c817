import { INestApplication } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { createValidationPipe } from '../common/errors/validation';
import { UnicodePipe, unicodeQueryMiddleware, verifyUtf8Body } from '../common/errors/unicode';
import { McpSecretReferenceDto, McpServerConfigDto } from '../modules/run-config/agent-config.dto';
import { completeOpenApiDocument } from './openapi-contract';
import { fillRegistryEnums } from '../common/registry/registry-openapi';
import { HarnessRegistry } from '../modules/workers/harness/harness-registry';
import { SandboxBackendRegistry } from '../modules/workers/sandbox/sandbox-backend-registry';
import { SignatureVerifierRegistry } from '../modules/webhooks/verifiers/signature-verifier-registry';
import type { AppConfig } from '../config/app-config';
import { API_PREFIX } from '../config/api-prefix';
import { metricsRoute } from '../modules/metrics/metrics-endpoint';
import { Observability, observeHttp } from './observability';

/** Five base64 attachments of up to 5 MB each, plus the rest of the request. */
const JSON_BODY_LIMIT = '40mb';

export function configureHttp(
  app: NestExpressApplication,
  config: AppConfig,
  observability: Observability,
): void {
  // First, so every answer (errors of unknown routes and of the body parser included) has an id,
  // a log line and its timing.
  observeHttp(app, observability);
  // Only with a token (the API port is public); outside the API prefix and its OpenAPI document.
  const { token } = config.metrics;
  if (token) app.use(metricsRoute(observability.metrics, token));
  app.setGlobalPrefix(API_PREFIX);
  // Invalid Unicode is refused at the boundary: query strings here, raw bodies by the parser,
  // escaped lone surrogates in bodies and path parameters by the first global pipe.
  app.use(unicodeQueryMiddleware);
  app.useGlobalPipes(new UnicodePipe(), createValidationPipe());
  // Nest's option type leaves out body-parser's `verify` (it keeps it for rawBody); it is passed on.
  const jsonOptions = { limit: JSON_BODY_LIMIT, verify: verifyUtf8Body };
  app.useBodyParser('json', jsonOptions);
  app.disable('x-powered-by');
  // Express hashes every JSON answer (SHA-1) for an ETag by default: ≈ 3 % of a run creation's
  // CPU. The API's answers are live state that clients do not revalidate, as on the ingress.
  app.disable('etag');
  setupOpenApi(app, config);
}

export function buildOpenApiDocument(app: INestApplication, config: AppConfig) {
  const options = new DocumentBuilder()
    .setTitle('Ambient Agent API')
    .setDescription(
      'Self-hosted cloud agent runs. Wire-compatible with the Oz Agent API: the official oz-agent-sdk works against it.',
    )
    .setVersion('1.0.0')
    .addServer(`${config.server.publicUrl.replace(/\/+$/, '')}/${API_PREFIX}`)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An Ambient API key' })
    .build();
  const document = SwaggerModule.createDocument(app, options, {
    ignoreGlobalPrefix: true,
    operationIdFactory: (_controller, method) => method,
    // Referenced only from `additionalProperties` (maps of servers), which the scanner does not follow.
    extraModels: [McpServerConfigDto, McpSecretReferenceDto],
  });
  fillRegistryEnums(document, {
    harness_type: app.get(HarnessRegistry).names(),
    signature_scheme: app.get(SignatureVerifierRegistry).names(),
    // Built-ins first: the built-in extension registers docker, bubblewrap and process.
    sandbox_backend: [...app.get(SandboxBackendRegistry).names(), 'unavailable'],
  });
  return completeOpenApiDocument(document);
}

function setupOpenApi(app: NestExpressApplication, config: AppConfig): void {
  const document = buildOpenApiDocument(app, config);
  SwaggerModule.setup('api/docs', app, document, {
    jsonDocumentUrl: `${API_PREFIX}/openapi.json`,
    yamlDocumentUrl: `${API_PREFIX}/openapi.yaml`,
  });
}
