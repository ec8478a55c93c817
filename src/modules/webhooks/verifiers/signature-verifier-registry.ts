import { Contribution, isEntryName, Registry } from '../../../common/registry/registry';
import type { SignatureVerifier } from './signature-verifier';

/** Headers that carry credentials whatever the scheme. */
const ALWAYS_CREDENTIAL_HEADERS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
];

export type SignatureVerifierContribution = Contribution<SignatureVerifier>;

/** The Nest token of the signature scheme contributions (Ambient's and the extensions'), in order. */
export const SIGNATURE_VERIFIER_CONTRIBUTIONS = Symbol('SIGNATURE_VERIFIER_CONTRIBUTIONS');

/** The signature schemes of this application (built-in and extension ones), by name. */
export class SignatureVerifierRegistry extends Registry<SignatureVerifier> {
  constructor() {
    super('signature scheme', (verifier) => verifier.scheme, { check: checkVerifier });
  }

  /** Headers refused as a webhook's deliveryIdHeader: they carry credentials in some mode. */
  get credentialHeaders(): ReadonlySet<string> {
    return new Set([
      ...ALWAYS_CREDENTIAL_HEADERS,
      ...this.list().flatMap((v) => v.credentialHeaders.map((h) => h.toLowerCase())),
    ]);
  }
}

export function checkVerifier(verifier: unknown): void {
  const v = verifier as Record<string, unknown> | null;
  const scheme = v?.scheme;
  // The webhooks table stores the scheme in 32 characters.
  if (!isEntryName(scheme, 32)) {
    throw new Error(
      'a signature verifier needs a scheme of 1-32 lower-case letters, digits, "_", "." or "-"',
    );
  }
  for (const fn of ['verify', 'checkSecret']) {
    if (typeof v?.[fn] !== 'function')
      throw new Error(`signature scheme "${scheme}" has no ${fn}()`);
  }
  if (!Array.isArray(v?.credentialHeaders)) {
    throw new Error(`signature scheme "${scheme}" has no credentialHeaders list`);
  }
}
