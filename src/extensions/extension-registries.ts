import { HarnessRegistry } from './harness-registry';
import { SignatureVerifierRegistry } from '../modules/webhooks/verifiers/signature-verifier-registry';
import type { AmbientExtension, ExtensionContext } from './extension.types';
import { entriesOf } from './extension-entries';
import { checkHarness } from './load-extensions';

export function harnessRegistryOf(
  extensions: readonly AmbientExtension[],
  context: ExtensionContext,
): HarnessRegistry {
  return new HarnessRegistry(
    extensions.flatMap((extension) =>
      entriesOf(extension.harnesses, context, checkHarness).map((harness) => ({
        owner: extension.name,
        harness,
      })),
    ),
  );
}

export function signatureVerifierRegistryOf(
  extensions: readonly AmbientExtension[],
): SignatureVerifierRegistry {
  return new SignatureVerifierRegistry(
    extensions.flatMap((extension) =>
      (extension.signatureVerifiers ?? []).map((verifier) => ({ owner: extension.name, verifier })),
    ),
  );
}
