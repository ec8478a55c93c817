import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { Invalidations } from '../../common/cache/invalidations';
import {
  mapClaim,
  mappedTeams,
  parseRoleMapping,
  RoleMappingEntry,
} from '../../config/role-mapping';
import { newUid } from '../../common/ids';
import type { TeamRole } from '../../common/auth/roles';
import type { Principal } from '../../common/auth/principal';
import { AuditLog } from '../audit';
import type { AuditActor } from '../audit';
import { systemActor } from '../audit';
import {
  PersonAccess,
  User,
  StartedSession,
  UserSessionsService,
  USER_TOPIC,
  TeamUserRepository,
} from '../teams';
import { SignInClaims, SignInFailure } from './oidc-relying-party.service';

/** A person as the provider names them, and where the role mapping puts them. */
interface Person {
  issuer: string;
  subject: string;
  email: string | null;
  displayName: string;
}

/**
 * Turns a provider's verified claims into a signed-in user: the role mapping gives the team and
 * role (none: refused, recorded as a denied `user.sign_in`), the user is created on first sign-in
 * (one per issuer and subject) and its team, role, name and email refreshed at each, and a
 * session is started; the user, the session and the `user.sign_in` event commit together.
 */
@Injectable()
export class SignInService {
  private readonly logger = new Logger('SignIn');
  private readonly mapping: RoleMappingEntry[];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly teamsAndUsers: TeamUserRepository,
    private readonly sessions: UserSessionsService,
    private readonly audit: AuditLog,
    private readonly invalidations: Invalidations,
    private readonly access: PersonAccess,
  ) {
    const text = config.signIn.oidcRoleMapping;
    this.mapping = text ? parseRoleMapping(text) : [];
  }

  async signIn(claims: SignInClaims): Promise<{ principal: Principal; session: StartedSession }> {
    const person = personOf(claims);
    const claim = claims[this.config.signIn.oidcRoleClaim];
    const mapped = mapClaim(this.mapping, claim);
    if (!mapped) {
      await this.refuse(
        person,
        `no value of claim "${this.config.signIn.oidcRoleClaim}" is in AMBIENT_OIDC_ROLE_MAPPING`,
        claim,
      );
      throw new SignInFailure(
        `You signed in as ${person.email ?? person.subject}, but nothing in your "${this.config.signIn.oidcRoleClaim}" claim gives access to an Ambient team. Ask an administrator to add you to a mapped group.`,
        403,
      );
    }
    const team = await this.teamsAndUsers.teamByName(mapped.team);
    if (!team) {
      await this.refuse(person, `team "${mapped.team}" of the role mapping does not exist`, claim);
      throw new SignInFailure(
        `Your groups map to the team "${mapped.team}", which does not exist in Ambient. Ask an administrator to create it.`,
        403,
      );
    }
    await this.refuseDeactivated(person);
    try {
      return await this.startSession(person, team.id, mapped.role);
    } catch (err) {
      // Two first sign-ins of one person at once: the unique (issuer, subject) key let the other
      // insert the user; this one finds it on the second try.
      if ((err as { code?: string }).code !== 'ER_DUP_ENTRY') throw err;
      return this.startSession(person, team.id, mapped.role);
    }
  }

  private startSession(
    person: Person,
    teamId: string,
    role: TeamRole,
  ): Promise<{ principal: Principal; session: StartedSession }> {
    return this.dataSource.transaction(async (manager) => {
      const user = await this.upsertUser(manager, person, teamId, role);
      const session = await this.sessions.start(manager, user);
      const principal = principalOf(user, role);
      await this.audit.record(
        manager,
        principal,
        'user.sign_in',
        { type: 'user', id: user.id },
        {
          issuer: person.issuer,
          subject: person.subject,
          role,
        },
      );
      return { principal, session };
    });
  }

  /** Records a signed-out session (the session row is already gone). */
  async signedOut(principal: Principal): Promise<void> {
    await this.dataSource.transaction((manager) =>
      this.audit.record(manager, principal, 'user.sign_out', {
        type: 'user',
        id: principal.userId,
      }),
    );
  }

  private async upsertUser(
    m: EntityManager,
    person: Person,
    teamId: string,
    role: TeamRole,
  ): Promise<User> {
    const now = new Date();
    const found = await this.teamsAndUsers.userByOidc(person.issuer, person.subject, m);
    const fields = {
      teamId,
      role,
      displayName: person.displayName,
      email: person.email,
      lastSignInAt: now,
    };
    if (found) {
      // Moved to another team: what they held in the old one (keys, other sessions) ends.
      if (found.teamId !== teamId) await this.access.cut(m, found.id);
      await this.teamsAndUsers.updateUser(found.id, fields, m);
      // Its API keys act with the role (and name) of this sign-in on every replica at once.
      await this.invalidations.changed(m, USER_TOPIC, [found.id]);
      return { ...found, ...fields };
    }
    const created: User = {
      id: newUid(),
      type: 'user',
      createdAt: now,
      oidcIssuer: person.issuer,
      oidcSubject: person.subject,
      ...fields,
    };
    await this.teamsAndUsers.insertUser(created, m);
    return created;
  }

  /**
   * A refused sign-in belongs to no team yet: it is recorded in each team the role mapping names
   * (those that exist), so their admins see who tried, with what claim.
   */
  private async refuse(person: Person, reason: string, claim: unknown): Promise<void> {
    this.logger.warn(
      `sign-in of ${person.subject} (${person.email ?? 'no email'}) refused: ${reason}`,
    );
    const teams = await this.teamsAndUsers.teamsByNames(mappedTeams(this.mapping));
    const actor: AuditActor = {
      type: 'user',
      id: `${person.subject}`.slice(0, 64),
      name: person.email ?? person.displayName,
      role: null,
    };
    const claimValues = (Array.isArray(claim) ? claim : [claim])
      .filter((v): v is string => typeof v === 'string')
      .slice(0, 50);
    const events = teams.map((team) =>
      this.audit.entry(
        { teamId: team.id, actor },
        'user.sign_in',
        null,
        { issuer: person.issuer, subject: person.subject, reason, claim: claimValues },
        'denied',
      ),
    );
    await this.dataSource.transaction(async (manager) => {
      await this.audit.insert(manager, events);
      await this.removeKnownPerson(manager, person, reason);
    });
  }

  /** A person deactivated through SCIM signs in again only once the provider reactivates them. */
  private async refuseDeactivated(person: Person): Promise<void> {
    const user = await this.teamsAndUsers.userByOidc(person.issuer, person.subject);
    if (!user?.deletedAt) return;
    this.logger.warn(`sign-in of ${person.subject} refused: deactivated through SCIM`);
    const event = this.audit.entry(
      {
        teamId: user.teamId,
        actor: { type: 'user', id: user.id, name: user.displayName, role: null },
      },
      'user.sign_in',
      { type: 'user', id: user.id },
      { issuer: person.issuer, subject: person.subject, reason: 'deactivated through SCIM' },
      'denied',
    );
    await this.dataSource.transaction((manager) => this.audit.insert(manager, [event]));
    throw new SignInFailure(
      'Your account was deactivated by your identity provider. Ask an administrator to reactivate it.',
      403,
    );
  }

  /**
   * The provider no longer maps a person Ambient knows to any team: their keys and sessions end
   * (recorded in their team as `user.access_revoked`). Signing in again once mapped gives them a
   * new session; their keys stay revoked.
   */
  private async removeKnownPerson(m: EntityManager, person: Person, reason: string) {
    const user = await this.teamsAndUsers.userByOidc(person.issuer, person.subject, m);
    if (!user) return;
    const cut = await this.access.cut(m, user.id);
    await this.audit.insert(m, [
      this.audit.entry(
        { teamId: user.teamId, actor: systemActor('oidc-sign-in', 'OpenID sign-in') },
        'user.access_revoked',
        { type: 'user', id: user.id },
        { reason, revoked_keys: cut.revokedKeys, ended_sessions: cut.endedSessions },
      ),
    ]);
  }
}

function personOf(claims: SignInClaims): Person {
  if (claims.iss.length > 255 || claims.sub.length > 255) {
    throw new SignInFailure(
      'The identity provider names you with an issuer or subject over 255 characters.',
    );
  }
  const text = (value: unknown) =>
    typeof value === 'string' && value.trim() ? value.trim() : null;
  const email = text(claims.email)?.toLowerCase().slice(0, 255) ?? null;
  const displayName = text(claims.name) ?? text(claims.preferred_username) ?? email ?? claims.sub;
  return {
    issuer: claims.iss,
    subject: claims.sub,
    email,
    displayName: displayName.slice(0, 255),
  };
}

function principalOf(user: User, role: TeamRole): Principal {
  return {
    teamId: user.teamId,
    userId: user.id,
    keyId: `user:${user.id}`,
    userType: 'user',
    role,
    displayName: user.displayName,
    email: user.email,
  };
}
