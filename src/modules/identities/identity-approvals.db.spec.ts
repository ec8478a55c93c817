import type { EntityManager } from 'typeorm';
import type { Invalidation, InvalidationBus } from '../../common/cache/broadcast-cache';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { AgentIdentityRepository } from './agent-identity.repository';
import { AGENT_IDENTITY_TOPIC, IdentityApprovals } from './identity-approvals.service';

/** The broadcast as one replica sees it: what is announced reaches its listeners at once. */
class LoopbackBus implements InvalidationBus {
  live = true;
  readonly cacheTtlMs = 60_000;
  private readonly listeners: ((invalidation: Invalidation | null) => void)[] = [];
  listen(listener: (invalidation: Invalidation | null) => void): void {
    this.listeners.push(listener);
  }
  changed(_manager: EntityManager | undefined, topic: string, ids: readonly string[]) {
    for (const id of ids) for (const listener of this.listeners) listener({ topic, id });
    return Promise.resolve();
  }
}

describe('IdentityApprovals (database)', () => {
  const db = useTestDatabase('identity_approvals');
  const identity = 'ApprovalsIdentityAAAAA';
  const person = 'ApprovalsPersonAAAAAAA';

  beforeAll(async () => {
    for (const [id, type] of [
      [identity, 'service_account'],
      [person, 'human'],
    ]) {
      await db.dataSource.query(
        `INSERT INTO users (id, team_id, display_name, type, created_at) VALUES (?, ?, ?, ?, NOW(3))`,
        [id, db.teamId, id, type],
      );
    }
    await db.dataSource.query(
      `INSERT INTO agent_identities (user_id, team_id, name, settings, created_at, updated_at)
       VALUES (?, ?, 'agent', ?, NOW(3), NOW(3))`,
      [identity, db.teamId, JSON.stringify({ approvals: [{ command: '^rm ', effect: 'ask' }] })],
    );
  });

  const setApprovals = (approvals: unknown[]) =>
    db.dataSource.query('UPDATE agent_identities SET settings = ? WHERE user_id = ?', [
      JSON.stringify({ approvals }),
      identity,
    ]);

  it('serves what it read until a change of the identity is announced, then reads it again', async () => {
    const repository = new AgentIdentityRepository(db.dataSource);
    const reads = jest.spyOn(repository, 'settingsOfUser');
    const bus = new LoopbackBus();
    const approvals = new IdentityApprovals(repository, bus);
    const first = [{ command: '^rm ', effect: 'ask' }];
    expect(await approvals.ofUser(db.teamId, identity)).toEqual(first);
    await setApprovals([{ command: '^git push', effect: 'deny' }]);
    // Written behind its back (no announcement): the entry is still served, without a read.
    expect(await approvals.ofUser(db.teamId, identity)).toEqual(first);
    expect(reads).toHaveBeenCalledTimes(1);

    await approvals.changed(db.dataSource.manager, [identity]);
    expect(await approvals.ofUser(db.teamId, identity)).toEqual([
      { command: '^git push', effect: 'deny' },
    ]);
    expect(reads).toHaveBeenCalledTimes(2);
    // Another identity's change leaves the entry.
    await bus.changed(undefined, AGENT_IDENTITY_TOPIC, [person]);
    await approvals.ofUser(db.teamId, identity);
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it('remembers that a person is no identity, and reads every time without a broadcaster', async () => {
    const repository = new AgentIdentityRepository(db.dataSource);
    const reads = jest.spyOn(repository, 'settingsOfUser');
    const cached = new IdentityApprovals(repository, new LoopbackBus());
    expect(await cached.ofUser(db.teamId, person)).toBeUndefined();
    expect(await cached.ofUser(db.teamId, person)).toBeUndefined();
    expect(reads).toHaveBeenCalledTimes(1);

    const uncached = new IdentityApprovals(repository);
    await setApprovals([]);
    expect(await uncached.ofUser(db.teamId, identity)).toEqual([]);
    await setApprovals([{ command: '^curl', effect: 'ask' }]);
    expect(await uncached.ofUser(db.teamId, identity)).toEqual([
      { command: '^curl', effect: 'ask' },
    ]);
    expect(reads).toHaveBeenCalledTimes(3);
  });
});
