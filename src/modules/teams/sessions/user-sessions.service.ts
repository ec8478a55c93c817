import { createHash, timingSafeEqual } from 'node:crypto';
import { newSecretToken } from '../../../common/ids';
import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { isTeamRole } from '../../../common/auth/roles';
import type { Principal } from '../../../common/auth/principal';
import type { User } from '../user.entity';
import { UserSessionRepository } from './user-session.repository';

/** What a new session gives the browser: its cookie values and when it ends. */
export interface StartedSession {
  token: string;
  csrfToken: string;
  expiresAt: Date;
}

export interface SessionPrincipal {
  principal: Principal;
  csrfToken: string;
  expiresAt: Date;
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** A session's principal names it by `session:` and the start of its row's id (not the cookie). */
export const SESSION_KEY_PREFIX = 'session:';
const SESSION_KEY_HEX = 24;
const sessionKeyOf = (id: string) => `${SESSION_KEY_PREFIX}${id.slice(0, SESSION_KEY_HEX)}`;

/** Constant-time comparison of a sent CSRF token with the session's. */
export function sameToken(sent: string | undefined, expected: string): boolean {
  if (sent === undefined) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Console sessions in MySQL, so any replica recognises a session and a sign-out (row deleted)
 * ends it on all of them at once. Lifetime is absolute (AMBIENT_SESSION_TTL_HOURS from sign-in).
 */
@Injectable()
export class UserSessionsService {
  constructor(
    private readonly sessions: UserSessionRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get ttlMs(): number {
    return Math.round(this.config.signIn.sessionTtlHours * 3_600_000);
  }

  /** Starts a session of `user` (in `manager`'s transaction), sweeping some expired ones. */
  async start(manager: EntityManager, user: User): Promise<StartedSession> {
    const now = new Date();
    const started = {
      token: newSecretToken(),
      csrfToken: newSecretToken(),
      expiresAt: new Date(now.getTime() + this.ttlMs),
    };
    await this.sessions.insertSweepingExpired(
      manager,
      {
        id: hashOf(started.token),
        userId: user.id,
        teamId: user.teamId,
        csrfToken: started.csrfToken,
        createdAt: now,
        expiresAt: started.expiresAt,
      },
      now,
    );
    return started;
  }

  /**
   * The principal of a live session: its user as the users table has it now (role refreshed at
   * each sign-in), or null for an unknown, ended or expired session or a deleted user.
   */
  async principalOf(token: string): Promise<SessionPrincipal | null> {
    if (!token || token.length > 128) return null;
    const session = await this.sessions.byId(hashOf(token));
    if (!session || session.expiresAt.getTime() <= Date.now()) return null;
    const user = await this.sessions.liveUserOf(session);
    if (!user || !isTeamRole(user.role)) return null;
    return {
      principal: {
        teamId: user.teamId,
        userId: user.id,
        // Per session: its idempotency keys are its own, and what it opened ends with it.
        keyId: sessionKeyOf(session.id),
        userType: 'user',
        role: user.role,
        displayName: user.displayName,
        email: user.email,
      },
      csrfToken: session.csrfToken,
      expiresAt: session.expiresAt,
    };
  }

  /** Of these session key ids (`session:…`), those whose session is live and whose user is. */
  async stillLive(keyIds: string[]): Promise<Set<string>> {
    const live = new Set<string>();
    if (keyIds.length === 0) return live;
    const prefixes = keyIds.map((k) => `${k.slice(SESSION_KEY_PREFIX.length).replace(/\W/g, '')}%`);
    for (const id of await this.sessions.liveIdsStartingWith(prefixes)) live.add(sessionKeyOf(id));
    return live;
  }

  /** Ends the session of `token`; answers whether there was one to end. */
  async end(token: string): Promise<boolean> {
    return this.sessions.delete(hashOf(token));
  }
}
