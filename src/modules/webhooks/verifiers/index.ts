import { githubVerifier } from './github.verifier';
import { pagerdutyVerifier } from './pagerduty.verifier';
import { sentryVerifier } from './sentry.verifier';
import { SignatureScheme, SignatureVerifier } from './signature-verifier';
import { standardWebhooksVerifier } from './standard-webhooks.verifier';
import { stripeVerifier } from './stripe.verifier';
import { vercelVerifier } from './vercel.verifier';

export * from './signature-verifier';

export const VERIFIERS: Record<SignatureScheme, SignatureVerifier> = {
  standard_webhooks: standardWebhooksVerifier,
  stripe: stripeVerifier,
  github: githubVerifier,
  sentry: sentryVerifier,
  pagerduty: pagerdutyVerifier,
  vercel: vercelVerifier,
};

/** Headers that carry credentials in any mode: refused as a webhook's deliveryIdHeader. */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  ...Object.values(VERIFIERS).flatMap((v) => v.credentialHeaders),
]);
