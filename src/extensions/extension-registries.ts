import { HarnessRegistry } from './harness-registry';
import type { AuthStrategyContext } from '../modules/teams/auth/auth-strategy';
import { AuthStrategyRegistry } from '../modules/teams/auth/auth-strategy-registry';
import { SignatureVerifierRegistry } from '../modules/webhooks/verifiers/signature-verifier-registry';
import type { AmbientExtension, ExtensionContext } from './extension.types';
import { checkAuthStrategy, checkHarness } from './load-extensions';
import { builtinExtension } from './builtin.extension';

/** An extension's entries at a point that takes a list or a function of the start-up context. */
function entriesOf<T, C>(
  entries: readonly T[] | ((context: C) => readonly T[]) | undefined,
  context: C,
  check: (entry: T) => void,
): readonly T[] {
  const list = typeof entries === 'function' ? entries(context) : (entries ?? []);
  list.forEach(check);
  return list;
}

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

export function authStrategyRegistryOf(
  extensions: readonly AmbientExtension[],
  context: AuthStrategyContext,
): AuthStrategyRegistry {
  return new AuthStrategyRegistry(
    extensions.flatMap((extension) =>
      entriesOf(extension.authStrategies, context, checkAuthStrategy).map((strategy) => ({
        owner: extension.name,
        strategy,
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

/**
 * AMBIENT_SANDBOX must name a built-in choice or a backend an extension registers (once): checked
 * at start-up, since the setting is read before extensions load.
 */
export function checkSandboxSetting(
  backend: string,
  extensions: readonly AmbientExtension[],
): void {
  const owners = new Map<string, string>([['auto', builtinExtension.name]]);
  for (const extension of [builtinExtension, ...extensions]) {
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
