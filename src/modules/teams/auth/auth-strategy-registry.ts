import type { Principal } from '../../../common/auth/principal';
import { Contribution, isEntryName, Registry } from '../../../common/registry/registry';
import type { AuthRequest, AuthStrategy, AuthStrategyContext } from './auth-strategy';

export type AuthStrategyContribution = Contribution<AuthStrategy, AuthStrategyContext>;

/** The Nest token of the auth strategy contributions (Ambient's first, then the extensions'). */
export const AUTH_STRATEGY_CONTRIBUTIONS = Symbol('AUTH_STRATEGY_CONTRIBUTIONS');

/** The auth strategies of this application, in the order the guard asks them. */
export class AuthStrategyRegistry extends Registry<AuthStrategy> {
  constructor() {
    super('auth strategy', (strategy) => strategy.name, { check: checkAuthStrategy });
  }

  /** The first strategy's principal (marked with its name), or null when none recognises the caller. */
  async authenticate(request: AuthRequest): Promise<Principal | null> {
    for (const strategy of this.list()) {
      const principal = await strategy.authenticate(request);
      if (principal) return { ...principal, strategy: strategy.name };
    }
    return null;
  }
}

export function checkAuthStrategy(strategy: unknown): void {
  const s = strategy as { name?: unknown; authenticate?: unknown } | null;
  if (!isEntryName(s?.name, 64)) {
    throw new Error(
      'an auth strategy needs a name of 1-64 lower-case letters, digits, "_", "." or "-"',
    );
  }
  if (typeof s.authenticate !== 'function') {
    throw new Error(`auth strategy "${s.name}" has no authenticate()`);
  }
}
