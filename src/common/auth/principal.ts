import type { TeamRole } from './roles';

/** The name of Ambient's own auth strategy: team, agent and run-scoped API keys. */
export const API_KEY_STRATEGY = 'api_key';

/** A person, or an agent identity (a service account). */
export type UserType = 'user' | 'service_account';

/** Who is calling: resolved by an auth strategy (AuthStrategy), attached to the request. */
export interface Principal {
  teamId: string;
  userId: string;
  /**
   * The API key that authenticated the call. A strategy without keys sets a stable id of its
   * credential instead (e.g. `user:<user id>`); only keys of the `api_key` strategy are watched
   * for revocation.
   */
  keyId: string;
  /**
   * The credential's own name: an API key's (the `api_key` strategy sets it); another strategy may
   * name its credential here too, else the audit log names it after the strategy.
   */
  keyName?: string | null;
  userType: UserType;
  /** The role the call acts with: the key's own, else its user's. */
  role: TeamRole;
  displayName: string;
  email: string | null;
  /** Set for a run-scoped key: the run (and its execution) the key may act on, nothing else. */
  runId?: string | null;
  runExecutionId?: number | null;
  /** The name of the auth strategy that recognised the caller (set by the authentication guard). */
  strategy?: string;
}
