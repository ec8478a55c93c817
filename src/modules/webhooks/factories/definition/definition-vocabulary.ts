import type { HarnessTypes } from '../../../run-config';
import type { SignatureVerifierRegistry } from '../../verifiers/signature-verifier-registry';

/** The registered names a definition may use: read from the extension registries, never listed. */
export interface DefinitionVocabulary {
  harnessTypes: readonly string[];
  signatureSchemes: readonly string[];
  /** Refused as a webhook's deliveryIdHeader. */
  credentialHeaders: ReadonlySet<string>;
}

export function definitionVocabulary(
  harnessTypes: HarnessTypes,
  verifiers: SignatureVerifierRegistry,
): DefinitionVocabulary {
  return {
    harnessTypes: harnessTypes.names(),
    signatureSchemes: verifiers.names(),
    credentialHeaders: verifiers.credentialHeaders,
  };
}
