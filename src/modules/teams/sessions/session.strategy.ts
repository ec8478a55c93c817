import { ApiError } from '../../../common/errors/api-error';
import type { Principal } from '../../../common/auth/principal';
import type { AuthRequest, AuthStrategy, SessionLookup } from '../auth/auth-strategy';
import { changesState, cookiesOf, CSRF_HEADER, SESSION_COOKIE } from './session-cookies';
import { sameToken } from './user-sessions.service';

export const SESSION_STRATEGY = 'session';

/**
 * The console's signed-in users: the `ambient_session` cookie names a live session. A call that
 * changes state must also send the session's CSRF token as `x-csrf-token` (a cross-site page can
 * make the browser send the cookie, but cannot read the token): without it the call is refused
 * with 403 rather than passed on, so no other strategy answers for a request that carries a
 * session. Asked after the API key strategy: a bearer key wins and needs no CSRF token.
 */
export function sessionStrategy({ sessions }: { sessions: SessionLookup }): AuthStrategy {
  return {
    name: SESSION_STRATEGY,
    async authenticate(request: AuthRequest): Promise<Principal | null> {
      const token = cookiesOf(request.headers).get(SESSION_COOKIE);
      if (!token) return null;
      const session = await sessions.principalOf(token);
      if (!session) return null;
      if (changesState(request.method)) {
        const sent = request.headers[CSRF_HEADER];
        if (!sameToken(typeof sent === 'string' ? sent : undefined, session.csrfToken)) {
          throw new ApiError(
            'not_authorized',
            `a ${request.method} signed in by the session cookie must send the session's CSRF token as "${CSRF_HEADER}" (the ambient_csrf cookie, or csrf_token of GET /api/v1/me)`,
          );
        }
      }
      return session.principal;
    },
  };
}
