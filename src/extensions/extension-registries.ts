import { SANDBOX_SETTINGS_BACKENDS } from '../config/app-config';
import { HarnessRegistry } from './harness-registry';
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

/**
 * AMBIENT_SANDBOX must name a built-in choice or a backend an extension registers (once): checked
 * at start-up, since the setting is read before extensions load.
 */
export function checkSandboxSetting(
  backend: string,
  extensions: readonly AmbientExtension[],
): void {
  const owners = new Map<string, string>();
  for (const name of SANDBOX_SETTINGS_BACKENDS) owners.set(name, 'ambient');
  for (const extension of extensions) {
    for (const factory of extension.sandboxBackends ?? []) {
      const earlier = owners.get(factory.name);
      if (earlier !== undefined) {
        throw new Error(
          `extension ${extension.name}: sandbox backend "${factory.name}" is already registered by ${earlier}`,
        );
      }
      owners.set(factory.name, extension.name);
    }
  }
  if (!owners.has(backend)) {
    throw new Error(
      `AMBIENT_SANDBOX: must be one of ${[...owners.keys()].join(', ')} (got "${backend}")`,
    );
  }
}
