import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import type { Principal } from '../../common/auth/principal';
import { newSecretToken, UID_PATTERN } from '../../common/ids';
import { AuditLog } from '../audit';
import { TeamUserRepository } from '../teams';
import { Environment, EnvironmentGrant } from './environment.entity';
import { EnvironmentGrantRepository } from './environment-grant.repository';
import { EnvironmentRepository } from './environment.repository';
import { asAccepted, isAccepted, VisibleEnvironment } from './environment-access';
import { EnvironmentsService, target } from './environments.service';

/** A grant waiting for an admin of the guest team: never accepted, or the owner changed it since. */
export interface PendingGrant {
  environment: Environment;
  grant: EnvironmentGrant;
}

/**
 * Sharing an environment with another team, by grant or share link. The offer counts only when an
 * admin of the receiving team accepts a version; the guest runs in that version until it accepts
 * a newer one, so an owner's later change never reaches a guest unreviewed.
 */
@Injectable()
export class EnvironmentSharingService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly environmentRows: EnvironmentRepository,
    private readonly grants: EnvironmentGrantRepository,
    private readonly teamsAndUsers: TeamUserRepository,
    private readonly environments: EnvironmentsService,
    private readonly audit: AuditLog,
  ) {}

  /** Offers the environment to `teamId`; pending until an admin of that team accepts it. */
  async grant(principal: Principal, uid: string, teamId: string): Promise<void> {
    await this.environments.findOwned(principal, uid, 'environment.grant');
    if (teamId === principal.teamId) {
      throw ApiError.invalid('team_id', 'is the owning team, which already has access');
    }
    if (!(await this.teamsAndUsers.teamExists(teamId))) {
      throw ApiError.invalid('team_id', `team "${teamId}" does not exist`);
    }
    await this.dataSource.transaction(async (m) => {
      // A repeated grant keeps what the guest accepted.
      await this.grants.offer(m, uid, teamId);
      await this.audit.record(m, principal, 'environment.grant', target(uid), { team_id: teamId });
    });
  }

  async revoke(principal: Principal, uid: string, teamId: string): Promise<void> {
    await this.environments.findOwned(principal, uid, 'environment.revoke');
    await this.dataSource.transaction(async (m) => {
      if (!(await this.grants.delete(m, uid, teamId))) {
        throw ApiError.notFound(`grant of environment "${uid}" to "${teamId}"`);
      }
      await this.audit.record(m, principal, 'environment.revoke', target(uid), { team_id: teamId });
    });
  }

  /** A new share token (replacing the previous one, which stops working). */
  async shareLink(principal: Principal, uid: string): Promise<string> {
    await this.environments.findOwned(principal, uid, 'environment.share_link');
    const shareToken = newSecretToken();
    await this.dataSource.transaction(async (m) => {
      await this.environmentRows.setShareToken(m, uid, shareToken);
      // The token opens the environment to anyone holding it: never recorded.
      await this.audit.record(m, principal, 'environment.share_link', target(uid));
    });
    return shareToken;
  }

  /**
   * An admin of the receiving team redeems a share token: the team accepts the environment's
   * current version (the answer shows it). The owning team redeeming its own token changes nothing.
   */
  async acceptShareLink(principal: Principal, token: string): Promise<VisibleEnvironment> {
    const found = await this.environmentRows.findByShareToken(token);
    if (!found) throw ApiError.notFound('share link');
    if (found.teamId === principal.teamId) return { environment: found, scope: 'owner' };
    return this.dataSource.transaction(async (m) => {
      const environment = await this.environmentRows.findLocked(m, found.id);
      if (!environment || environment.shareToken !== token) throw ApiError.notFound('share link');
      const grant = await this.acceptVersion(
        m,
        principal,
        environment,
        'environment.accept_share_link',
      );
      return { environment: asAccepted(environment, grant), scope: 'guest' };
    });
  }

  /** Offers to the caller's team awaiting its admin: new grants, and changes since an acceptance. */
  async pending(teamId: string): Promise<PendingGrant[]> {
    const grants = await this.grants.listOfTeam(teamId);
    if (grants.length === 0) return [];
    const environments = await this.environmentRows.findByIds(grants.map((g) => g.environmentId));
    const byId = new Map(environments.map((e) => [e.id, e]));
    return grants
      .flatMap((grant) => {
        const environment = byId.get(grant.environmentId);
        return environment && grant.acceptedVersion !== environment.version
          ? [{ environment, grant }]
          : [];
      })
      .sort((a, b) => a.grant.createdAt.getTime() - b.grant.createdAt.getTime());
  }

  /**
   * Accepts `version` of an environment offered to the caller's team. The version is the one the
   * admin reviewed: when the owner changed it since, the answer is 409 and nothing changes.
   */
  async accept(principal: Principal, uid: string, version: number): Promise<VisibleEnvironment> {
    return this.dataSource.transaction(async (m) => {
      const environment = UID_PATTERN.test(uid)
        ? await this.environmentRows.findLocked(m, uid)
        : null;
      const offered = environment && (await this.grants.exists(m, uid, principal.teamId));
      if (!environment || !offered) throw ApiError.notFound(`offer of environment "${uid}"`);
      if (environment.version !== version) {
        throw new ApiError(
          'conflict',
          `version ${version} is not the environment's current version (${environment.version}); ` +
            'review the current one and accept it',
        );
      }
      const grant = await this.acceptVersion(m, principal, environment, 'environment.accept');
      return { environment: asAccepted(environment, grant), scope: 'guest' };
    });
  }

  /** The caller's team turns the offer down, or leaves a shared environment: its grant is removed. */
  async decline(principal: Principal, uid: string): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      const removed = UID_PATTERN.test(uid) && (await this.grants.delete(m, uid, principal.teamId));
      if (!removed) throw ApiError.notFound(`offer of environment "${uid}"`);
      await this.audit.record(m, principal, 'environment.decline', target(uid));
    });
  }

  /** Pins the environment's current version on the caller's grant (made if it has none). */
  private async acceptVersion(
    m: EntityManager,
    principal: Principal,
    environment: Environment,
    action: 'environment.accept' | 'environment.accept_share_link',
  ): Promise<EnvironmentGrant> {
    const key = { environmentId: environment.id, teamId: principal.teamId };
    const previous = await this.grants.find(m, key.environmentId, key.teamId);
    const grant: EnvironmentGrant = {
      ...key,
      createdAt: previous?.createdAt ?? new Date(),
      acceptedVersion: environment.version,
      acceptedConfig: { name: environment.name, config: environment.config },
      acceptedAt: new Date(),
      acceptedBy: principal.userId,
      // A new version is set up afresh: the guest's last outcome was of another config.
      setupFailed:
        isAccepted(previous) && previous.acceptedVersion === environment.version
          ? previous.setupFailed
          : false,
    };
    await this.grants.save(m, grant);
    await this.audit.record(m, principal, action, target(environment.id), {
      owner_team_id: environment.teamId,
      version: environment.version,
    });
    return grant;
  }
}
