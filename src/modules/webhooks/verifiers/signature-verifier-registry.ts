import type { SignatureVerifier } from './signature-verifier';

/** Headers that carry credentials whatever the scheme. */
const ALWAYS_CREDENTIAL_HEADERS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
];

/** The signature schemes of this application (built-in and extension ones), by name. */
export class SignatureVerifierRegistry {
  private readonly byScheme = new Map<string, SignatureVerifier>();
  /** Headers refused as a webhook's deliveryIdHeader: they carry credentials in some mode. */
  readonly credentialHeaders: ReadonlySet<string>;

  constructor(registrations: readonly { owner: string; verifier: SignatureVerifier }[]) {
    const owners = new Map<string, string>();
    for (const { owner, verifier } of registrations) {
      const earlier = owners.get(verifier.scheme);
      if (earlier !== undefined) {
        throw new Error(
          `extension ${owner}: signature scheme "${verifier.scheme}" is already registered by ${earlier}`,
        );
      }
      owners.set(verifier.scheme, owner);
      this.byScheme.set(verifier.scheme, verifier);
    }
    this.credentialHeaders = new Set([
      ...ALWAYS_CREDENTIAL_HEADERS,
      ...[...this.byScheme.values()].flatMap((v) =>
        v.credentialHeaders.map((h) => h.toLowerCase()),
      ),
    ]);
  }

  find(scheme: string): SignatureVerifier | undefined {
    return this.byScheme.get(scheme);
  }

  get schemes(): string[] {
    return [...this.byScheme.keys()];
  }
}
