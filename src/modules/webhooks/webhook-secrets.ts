import { randomBytes } from 'node:crypto';
import { newSecretToken } from '../../common/ids';
import type { AuthMode } from './auth-modes';
import type { SignatureScheme } from './verifiers';

/** Characters a url_token secret may hold (RFC 3986 unreserved). */
export const URL_SAFE_SECRET = /^[A-Za-z0-9._~-]+$/;

/**
 * A new secret for a webhook: 256 random bits, base64url for tokens (URL-safe), or a
 * `whsec_` Standard Webhooks secret. Null when the provider issues the secret (other schemes).
 */
export function generateWebhookSecret(
  mode: AuthMode,
  scheme: SignatureScheme | null,
): string | null {
  if (mode !== 'signature') return newSecretToken();
  if (scheme === 'standard_webhooks') return `whsec_${randomBytes(32).toString('base64')}`;
  return null;
}

/** Why a secret value cannot serve a webhook in this mode, or null. */
export function secretProblem(mode: AuthMode, value: string): string | null {
  if (mode === 'url_token' && !URL_SAFE_SECRET.test(value)) {
    return 'a url_token secret may contain only A-Za-z0-9 and "-", ".", "_", "~"';
  }
  if (mode !== 'signature' && value.length < 16) {
    return 'a token secret must be at least 16 characters';
  }
  return null;
}

/** The ingress URL of a webhook; a url_token URL shows `{token}` unless the token is given. */
export function webhookUrl(baseUrl: string, uid: string, mode: AuthMode, token?: string): string {
  const base = `${baseUrl.replace(/\/+$/, '')}/webhooks/w/${uid}`;
  return mode === 'url_token' ? `${base}/${token ?? '{token}'}` : base;
}
