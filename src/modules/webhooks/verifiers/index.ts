import { githubVerifier } from './github.verifier';
import { pagerdutyVerifier } from './pagerduty.verifier';
import { sentryVerifier } from './sentry.verifier';
import { SignatureVerifier } from './signature-verifier';
import { standardWebhooksVerifier } from './standard-webhooks.verifier';
import { stripeVerifier } from './stripe.verifier';
import { vercelVerifier } from './vercel.verifier';

export * from './signature-verifier';
export * from './signature-verifier-registry';

/** Ambient's own schemes; the built-in extension registers them (OpenAPI enum order). */
export const BUILTIN_VERIFIERS: readonly SignatureVerifier[] = [
  standardWebhooksVerifier,
  stripeVerifier,
  githubVerifier,
  sentryVerifier,
  pagerdutyVerifier,
  vercelVerifier,
];
