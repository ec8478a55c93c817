import type { HarnessRegistry } from '../../../../extensions/harness-registry';
import type { SignatureVerifierRegistry } from '../../verifiers/signature-verifier-registry';

/** The registered names a definition may use: read from the extension registries, never listed. */
export interface DefinitionVocabulary {
  harnessTypes: readonly string[];
  signatureSchemes: readonly string[];
  /** Refused as a webhook's deliveryIdHeader. */
  credentialHeaders: ReadonlySet<string>;
}

export function definitionVocabulary(
  harnesses: HarnessRegistry,
  verifiers: SignatureVerifierRegistry,
): DefinitionVocabulary {
  return {
    harnessTypes: harnesses.types,
    signatureSchemes: verifiers.schemes,
    credentialHeaders: verifiers.credentialHeaders,
  };
}
