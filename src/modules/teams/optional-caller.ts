import { ApiError } from '../../common/errors/api-error';
import type { ApiKeysService } from './api-keys.service';

/**
 * The team of the caller of a public route that also takes a key: null without an
 * `Authorization` header (and for a run-scoped key, which may only report for its run). A key
 * that is sent must be valid (401 otherwise); `hint` completes the 401's detail.
 */
export async function optionalCallerTeam(
  apiKeys: ApiKeysService,
  authorization: string | undefined,
  hint: string,
): Promise<string | null> {
  if (!authorization) return null;
  const token = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
  const principal = token ? await apiKeys.authenticate(token) : null;
  if (!principal) {
    throw new ApiError(
      'authentication_required',
      `send a valid API key as "Authorization: Bearer <key>", or none ${hint}`,
    );
  }
  return principal.runId ? null : principal.teamId;
}
