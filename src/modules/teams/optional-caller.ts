import { ApiError } from '../../common/errors/api-error';
import type { AuthRequest } from './auth/auth-strategy';
import type { AuthStrategyRegistry } from './auth/auth-strategy-registry';

/**
 * The team of the caller of a public route that also takes a credential: null when no auth
 * strategy recognises the caller and no `Authorization` header was sent (and for a run-scoped key,
 * which may only report for its run). A key that is sent must be valid (401 otherwise); `hint`
 * completes the 401's detail.
 */
export async function optionalCallerTeam(
  strategies: AuthStrategyRegistry,
  request: AuthRequest,
  hint: string,
): Promise<string | null> {
  const principal = await strategies.authenticate(request);
  if (!principal && request.headers.authorization) {
    throw new ApiError(
      'authentication_required',
      `send a valid API key as "Authorization: Bearer <key>", or none ${hint}`,
    );
  }
  return !principal || principal.runId ? null : principal.teamId;
}
