import { Injectable } from '@nestjs/common';
import { EntityManager, In, IsNull } from 'typeorm';
import { UID_PATTERN } from '../../common/ids';
import { jsonColumn } from '../../database/json-column';
import { AgentIdentity } from './agent-identity.entity';
import { SqlRepository } from '../../database/sql-repository';

/**
 * `agent_identities`: the identities module's rows, and the reads of others (approvals, limits,
 * the workers' approval rules), who never query the table themselves. `manager` joins a caller's
 * transaction.
 */
@Injectable()
export class AgentIdentityRepository extends SqlRepository {
  /** The team's identities with these uids, deleted ones too. */
  findByUids(teamId: string, uids: string[], manager?: EntityManager): Promise<AgentIdentity[]> {
    const wanted = uids.filter((uid) => UID_PATTERN.test(uid));
    if (wanted.length === 0) return Promise.resolve([]);
    return this.db(manager)
      .getRepository(AgentIdentity)
      .findBy({ teamId, uid: In(wanted) });
  }

  /** Whether the team has a live (not deleted) identity with this uid. */
  existsLive(teamId: string, uid: string, manager?: EntityManager): Promise<boolean> {
    if (!UID_PATTERN.test(uid)) return Promise.resolve(false);
    return this.db(manager)
      .getRepository(AgentIdentity)
      .exists({ where: { uid, teamId, deletedAt: IsNull() } });
  }

  /** Identities the team has (not deleted). */
  async countLive(teamId: string, manager?: EntityManager): Promise<number> {
    const rows = (await this.db(manager).query(
      `SELECT COUNT(*) AS n FROM agent_identities WHERE team_id = ? AND deleted_at IS NULL`,
      [teamId],
    )) as { n: number | string }[];
    return Number(rows[0]?.n ?? 0);
  }

  /** The service-account user ids of the team's oldest `limit` identities that are not deleted. */
  async oldestLiveUserIds(teamId: string, limit: number): Promise<string[]> {
    const rows = (await this.db().query(
      `SELECT user_id FROM agent_identities
        WHERE team_id = ? AND deleted_at IS NULL
        ORDER BY created_at, user_id LIMIT ?`,
      [teamId, limit],
    )) as { user_id: string }[];
    return rows.map((r) => r.user_id);
  }

  /** The `settings` JSON of the team's identity whose service account is `userId` (undefined: none). */
  async settingsOfUser(
    teamId: string,
    userId: string,
  ): Promise<Record<string, unknown> | null | undefined> {
    const [row] = (await this.db().query(
      'SELECT settings FROM agent_identities WHERE user_id = ? AND team_id = ?',
      [userId, teamId],
    )) as { settings: string | Record<string, unknown> | null }[];
    return row ? jsonColumn(row.settings) : undefined;
  }

  /** A live (not deleted) identity of the team, or null. */
  findLive(teamId: string, uid: string): Promise<AgentIdentity | null> {
    // A uid from a request that no identity can have: MySQL would refuse to compare its
    // characters with the ASCII column ("Illegal mix of collations") rather than find nothing.
    if (!UID_PATTERN.test(uid)) return Promise.resolve(null);
    return this.db().getRepository(AgentIdentity).findOneBy({ uid, teamId, deletedAt: IsNull() });
  }

  /** The team's live identities (of one factory when `factoryUid` is given), oldest first. */
  listLive(teamId: string, factoryUid?: string): Promise<AgentIdentity[]> {
    return this.db()
      .getRepository(AgentIdentity)
      .find({
        where: { teamId, deletedAt: IsNull(), ...(factoryUid ? { factoryUid } : {}) },
        order: { createdAt: 'ASC', uid: 'ASC' },
      });
  }

  /** The team's live identity, locked until `manager`'s transaction ends; null when there is none. */
  lockLive(manager: EntityManager, teamId: string, uid: string): Promise<AgentIdentity | null> {
    if (!UID_PATTERN.test(uid)) return Promise.resolve(null);
    return manager
      .getRepository(AgentIdentity)
      .createQueryBuilder('a')
      .setLock('pessimistic_write')
      .where('a.user_id = :uid AND a.team_id = :teamId AND a.deleted_at IS NULL', { uid, teamId })
      .getOne();
  }

  async insert(manager: EntityManager, row: AgentIdentity): Promise<void> {
    await manager.getRepository(AgentIdentity).insert(row);
  }

  async update(
    manager: EntityManager,
    uid: string,
    changes: Pick<AgentIdentity, 'name' | 'settings' | 'updatedAt'>,
  ): Promise<void> {
    await manager.getRepository(AgentIdentity).update({ uid }, changes);
  }

  async softDelete(manager: EntityManager, uid: string, at: Date): Promise<void> {
    await manager.getRepository(AgentIdentity).update({ uid }, { deletedAt: at, updatedAt: at });
  }

  /** Of `ids` (not empty), those naming one of the team's agent identities (a secret's scope). */
  async userIdsOfTeam(manager: EntityManager, teamId: string, ids: string[]): Promise<Set<string>> {
    const found = (await manager.query(
      `SELECT user_id AS id FROM agent_identities WHERE team_id = ? AND user_id IN (?)`,
      [teamId, ids],
    )) as { id: string }[];
    return new Set(found.map((row) => row.id));
  }
}
