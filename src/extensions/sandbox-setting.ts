import { builtinExtension } from './builtin.extension';
import type { AmbientExtension } from './extension.types';

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
