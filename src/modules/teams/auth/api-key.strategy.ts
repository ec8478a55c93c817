import type { Principal } from '../principal';
import type { AuthRequest, AuthStrategy, AuthStrategyContext } from './auth-strategy';

export const API_KEY_STRATEGY = 'api_key';

/** `Authorization: Bearer <key>` (the scheme case-insensitive, one space, nothing else). */
export function bearerTokenOf(request: AuthRequest): string | null {
  const parts = request.headers.authorization?.split(' ');
  if (parts?.length !== 2 || !/^Bearer$/i.test(parts[0])) return null;
  return parts[1] || null;
}

/** Ambient's own strategy: a team, agent or run-scoped API key sent as a bearer token. */
export function apiKeyStrategy({ apiKeys }: Pick<AuthStrategyContext, 'apiKeys'>): AuthStrategy {
  return {
    name: API_KEY_STRATEGY,
    async authenticate(request): Promise<Principal | null> {
      const token = bearerTokenOf(request);
      return token ? apiKeys.authenticate(token) : null;
    },
  };
}
