/** What other modules may use of webhooks/: they import it from here only (ESLint rule ambient/import-through-index). */
export { AUTH_MODES } from './auth-modes';
export type { AuthMode } from './auth-modes';
export { Webhook } from './entities/webhook.entity';
export { validatePayloadFilter } from './filter/payload-filter-validation';
export type { PayloadFilter } from './filter/payload-filter';
export { BUILTIN_REGISTRY } from './verifiers/builtin-verifiers.fixture';
export type { SignatureScheme } from './verifiers/index';
export { SignatureVerifierRegistry } from './verifiers/signature-verifier-registry';
export { secretProblem } from './webhook-secrets';
export { WebhookStore } from './webhook-store.service';
export { WebhooksModule } from './webhooks.module';
