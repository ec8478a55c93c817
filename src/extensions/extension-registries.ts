import { HarnessRegistry } from '../modules/harness/harness-registry';
import { SignatureVerifierRegistry } from '../modules/webhooks/verifiers/signature-verifier-registry';
import type { AmbientExtension, ExtensionContext } from './extension.types';
import { checkHarness } from './load-extensions';

export function harnessRegistryOf(
  extensions: readonly AmbientExtension[],
  context: ExtensionContext,
): HarnessRegistry {
  return new HarnessRegistry(
    extensions.flatMap((extension) => {
      const { harnesses } = extension;
      const list = typeof harnesses === 'function' ? harnesses(context) : (harnesses ?? []);
      return list.map((harness) => {
        checkHarness(harness);
        return { owner: extension.name, harness };
      });
    }),
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
