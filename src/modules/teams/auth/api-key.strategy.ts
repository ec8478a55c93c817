import { Strategy as BearerStrategy } from 'passport-http-bearer';
import { API_KEY_STRATEGY, type Principal } from '../../../common/auth/principal';
import type { AuthRequest, AuthStrategy, AuthStrategyContext } from './auth-strategy';

export { API_KEY_STRATEGY };

/** `Authorization: Bearer <key>` (the scheme case-insensitive, one space, nothing else). */
export function bearerTokenOf(request: AuthRequest): string | null {
  const parts = request.headers.authorization?.split(' ');
  if (parts?.length !== 2 || !/^Bearer$/i.test(parts[0])) return null;
  return parts[1] || null;
}

/**
 * Ambient's own strategy: a team, agent or run-scoped API key sent as a bearer token, read by
 * passport-http-bearer (RFC 6750). Only the header is given to it: a key in a query string or a
 * form body would end up in logs and proxies, so `access_token` there is never looked at.
 */
export function apiKeyStrategy({ apiKeys }: Pick<AuthStrategyContext, 'apiKeys'>): AuthStrategy {
  const bearer = new BearerStrategy((token, done) => {
    apiKeys.authenticate(token).then(
      (principal) => done(null, principal ?? false),
      (err: Error) => done(err),
    );
  });
  return {
    name: API_KEY_STRATEGY,
    authenticate(request): Promise<Principal | null> {
      return new Promise((resolve, reject) => {
        // One passport "action" object per request: passport calls success, fail or error on it.
        const action = Object.assign(Object.create(bearer) as typeof bearer, {
          success: (principal: Principal) => resolve(principal),
          fail: () => resolve(null),
          error: (err: Error) => reject(err),
        });
        action.authenticate({ headers: { authorization: request.headers.authorization } } as never);
      });
    },
  };
}
