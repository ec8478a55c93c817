import type { IncomingHttpHeaders } from 'node:http';
import type { AppConfig } from '../../../config/app-config';
import type { TeamRole } from '../../../common/auth/roles';
import type { Principal } from '../../../common/auth/principal';
import type { SessionPrincipal } from '../sessions/user-sessions.service';

/** What a strategy sees of a request (the Express request satisfies it). */
export interface AuthRequest {
  readonly method: string;
  /** The path without the query string, e.g. `/api/v1/agent/runs`. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly ip?: string;
}

/**
 * One way of recognising a caller. The authentication guard asks the registered strategies in
 * order (Ambient's API key strategy first, then the extensions' in their order); the first that
 * answers a principal wins. Answer null for a request this strategy does not recognise (no
 * credential of its kind, or one that does not check out): the next strategy is asked, and when
 * none answers the request is refused with 401 `authentication_required`.
 */
export interface AuthStrategy {
  /** 1-64 lower-case letters, digits, "_", "." or "-"; unique in the application. */
  readonly name: string;
  authenticate(request: AuthRequest): Promise<Principal | null>;
}

/** A person of a team, as a strategy that maps requests to people names them. */
export interface DirectoryUser {
  /** The team's name (as `teams create --name` made it); an unknown team recognises no one. */
  team: string;
  /** Identifies the person within the team; the user is created the first time it is seen. */
  email: string;
  displayName?: string;
  role: TeamRole;
}

/** Ambient's users, for strategies that authenticate people rather than API keys. */
export interface UserDirectory {
  /**
   * The principal of a person of a team: the team's user with this email (created on first
   * sight; display name and role kept up to date), or null when the team does not exist or the
   * person was deactivated (SCIM).
   */
  principalOf(user: DirectoryUser): Promise<Principal | null>;
}

/** Resolves the console's session cookie (UserSessionsService). */
export interface SessionLookup {
  principalOf(token: string): Promise<SessionPrincipal | null>;
}

/** What a contribution of auth strategies that is a function receives. */
export interface AuthStrategyContext {
  config: AppConfig;
  users: UserDirectory;
  /** Resolves an Ambient API key to its principal (null when unknown, revoked or expired). */
  apiKeys: { authenticate(plainKey: string): Promise<Principal | null> };
  /** Resolves a console session cookie (the built-in `session` strategy). */
  sessions: SessionLookup;
}
