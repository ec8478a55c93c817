import type { Principal } from '../../../common/auth/principal';
import { entriesOf } from '../../../extensions/extension-entries';
import type { AmbientExtension } from '../../../extensions/extension.types';
import { checkAuthStrategy } from '../../../extensions/load-extensions';
import type { AuthRequest, AuthStrategy, AuthStrategyContext } from './auth-strategy';

/** The auth strategies of this application, in the order the guard asks them. */
export class AuthStrategyRegistry {
  readonly strategies: readonly AuthStrategy[];

  constructor(registrations: readonly { owner: string; strategy: AuthStrategy }[]) {
    const owners = new Map<string, string>();
    for (const { owner, strategy } of registrations) {
      const earlier = owners.get(strategy.name);
      if (earlier !== undefined) {
        throw new Error(
          `extension ${owner}: auth strategy "${strategy.name}" is already registered by ${earlier}`,
        );
      }
      owners.set(strategy.name, owner);
    }
    this.strategies = registrations.map((r) => r.strategy);
  }

  get names(): string[] {
    return this.strategies.map((s) => s.name);
  }

  /** The first strategy's principal (marked with its name), or null when none recognises the caller. */
  async authenticate(request: AuthRequest): Promise<Principal | null> {
    for (const strategy of this.strategies) {
      const principal = await strategy.authenticate(request);
      if (principal) return { ...principal, strategy: strategy.name };
    }
    return null;
  }
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
