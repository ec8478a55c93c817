import { LoopbackBus } from '../../../test/support/unit/loopback-bus';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { AgentIdentityRepository } from './agent-identity.repository';
import { AGENT_IDENTITY_TOPIC, IdentityApprovals } from './identity-approvals.service';

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
