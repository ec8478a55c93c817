import { createHash, timingSafeEqual } from 'node:crypto';
import { newSecretToken } from '../../../common/ids';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { isTeamRole } from '../../../common/auth/roles';
import type { Principal } from '../../../common/auth/principal';
import { User } from '../user.entity';
import { UserSession } from './user-session.entity';

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
    @InjectDataSource() private readonly dataSource: DataSource,
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
    await manager.getRepository(UserSession).insert({
      id: hashOf(started.token),
      userId: user.id,
      teamId: user.teamId,
      csrfToken: started.csrfToken,
      createdAt: now,
      expiresAt: started.expiresAt,
    });
    await manager.query(`DELETE FROM user_sessions WHERE expires_at < ? LIMIT 100`, [now]);
    return started;
  }

  /**
   * The principal of a live session: its user as the users table has it now (role refreshed at
   * each sign-in), or null for an unknown, ended or expired session or a deleted user.
   */
  async principalOf(token: string): Promise<SessionPrincipal | null> {
    if (!token || token.length > 128) return null;
    const session = await this.dataSource
      .getRepository(UserSession)
      .findOneBy({ id: hashOf(token) });
    if (!session || session.expiresAt.getTime() <= Date.now()) return null;
    const user = await this.dataSource
      .getRepository(User)
      .createQueryBuilder('u')
      .where('u.id = :id AND u.team_id = :teamId AND u.deleted_at IS NULL', {
        id: session.userId,
        teamId: session.teamId,
      })
      .getOne();
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
    const rows = (await this.dataSource.query(
      `SELECT s.id FROM user_sessions s JOIN users u ON u.id = s.user_id AND u.team_id = s.team_id
        WHERE u.deleted_at IS NULL AND s.expires_at > ?
          AND (${prefixes.map(() => 's.id LIKE ?').join(' OR ')})`,
      [new Date(), ...prefixes],
    )) as { id: string }[];
    for (const row of rows) live.add(sessionKeyOf(row.id));
    return live;
  }

  /** Ends the session of `token`; answers whether there was one to end. */
  async end(token: string): Promise<boolean> {
    const result = await this.dataSource.getRepository(UserSession).delete({ id: hashOf(token) });
    return (result.affected ?? 0) > 0;
  }
}
