import type { Principal } from '../../../common/auth/principal';
import type { AuthRequest, AuthStrategy } from './auth-strategy';

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
