import { randomUUID } from 'node:crypto';
import { newUid } from '../../common/ids';
import { insertRun } from '../../../test/support/unit/run-rows';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { ConversationRunRepository } from './conversation-run.repository';
import { Run } from './entities/run.entity';
import { LatestRunRepository } from './latest-run.repository';
import { RunLookupRepository } from './run-lookup.repository';
import { RunSlotRepository } from './run-slot.repository';

interface RunFields {
  teamId?: string;
  conversationId?: string;
  skillSpec?: string;
  environmentId?: string;
  createdAt?: Date;
  startedAt?: Date;
}

/** The reads other modules make of the runs table, on a real database. */
describe('the run repositories other modules read through (database)', () => {
  const db = useTestDatabase('runrecords');
  const otherTeam = 'OtherTeamRunReposTTTTT';
  let lookups: RunLookupRepository;
  let conversationRuns: ConversationRunRepository;
  let latestRuns: LatestRunRepository;

  beforeAll(() => {
    lookups = new RunLookupRepository(db.dataSource);
    conversationRuns = new ConversationRunRepository(db.dataSource);
    latestRuns = new LatestRunRepository(db.dataSource);
  });

  /** A run of the spec's team (or `teamId`'s) with the columns these reads look at. */
  const run = async (fields: RunFields = {}): Promise<string> => {
    const id = await insertRun(db.dataSource, db.teamId);
    const createdAt = fields.createdAt ?? new Date();
    await db.dataSource.query(
      `UPDATE runs SET team_id = ?, conversation_id = ?, skill_spec = ?, environment_id = ?,
         created_at = ?, started_at = ? WHERE id = ?`,
      [
        fields.teamId ?? db.teamId,
        fields.conversationId ?? id,
        fields.skillSpec ?? null,
        fields.environmentId ?? null,
        createdAt,
        fields.startedAt ?? null,
        id,
      ],
    );
    return id;
  };
  const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 12, minute));
  const message = async (runId: string, executionId: number, text: string) => {
    await db.dataSource.query(
      `INSERT INTO run_messages (run_id, execution_id, message, created_at) VALUES (?, ?, ?, ?)`,
      [runId, executionId, JSON.stringify({ role: 'user', content: text }), at(0)],
    );
  };

  it("finds a run of the caller's team only, or of any team without one", async () => {
    const ours = await run();
    const theirs = await run({ teamId: otherTeam });
    expect((await lookups.findOfTeam(ours, db.teamId))?.id).toBe(ours);
    expect(await lookups.findOfTeam(theirs, db.teamId)).toBeNull();
    expect((await lookups.findOfTeam(theirs, null))?.teamId).toBe(otherTeam);
    expect(await lookups.findOfTeam(randomUUID(), null)).toBeNull();
    expect(await lookups.exists(ours, db.teamId)).toBe(true);
    expect(await lookups.exists(theirs, db.teamId)).toBe(false);
    const found = await lookups.findAllOfTeam([ours, theirs, randomUUID()], db.teamId);
    expect(found.map((r) => r.id)).toEqual([ours]);
    expect(found[0]).toBeInstanceOf(Run);
    expect(await lookups.findAllOfTeam([], db.teamId)).toEqual([]);
  });

  it("lists the team's runs of a conversation oldest first and finds its latest", async () => {
    const conversationId = randomUUID();
    const second = await run({ conversationId, createdAt: at(2) });
    const first = await run({ conversationId, createdAt: at(1) });
    const theirs = await run({ conversationId, teamId: otherTeam, createdAt: at(3) });
    await run({ createdAt: at(4) });

    const listed = await conversationRuns.listInConversation(db.teamId, conversationId);
    expect(listed.map((r) => r.id)).toEqual([first, second]);
    expect(await conversationRuns.listInConversation(db.teamId, randomUUID())).toEqual([]);
    expect((await conversationRuns.latestInConversation(conversationId, db.teamId))?.id).toBe(
      second,
    );
    expect((await conversationRuns.latestInConversation(conversationId, null))?.id).toBe(theirs);
    expect(await conversationRuns.latestInConversation(randomUUID(), null)).toBeNull();
    expect(await conversationRuns.isInConversation(first, conversationId)).toBe(true);
    expect(await conversationRuns.isInConversation(first, randomUUID())).toBe(false);
  });

  it('breaks a tie on the latest run of a conversation by the greater id', async () => {
    const conversationId = randomUUID();
    const ids = [await run({ conversationId, createdAt: at(5) })];
    ids.push(await run({ conversationId, createdAt: at(5) }));
    const latest = await conversationRuns.latestInConversation(conversationId, db.teamId);
    expect(latest?.id).toBe([...ids].sort().at(-1));
  });

  it("reads the messages of a run's whole conversation in the team, in stored order", async () => {
    const conversationId = randomUUID();
    const first = await run({ conversationId, createdAt: at(1) });
    const second = await run({ conversationId, createdAt: at(2) });
    const theirs = await run({ conversationId, teamId: otherTeam });
    await message(first, 1, 'one');
    await message(theirs, 1, 'not ours');
    await message(second, 1, 'two');
    await message(first, 2, 'three');

    const rows = await conversationRuns.transcriptMessagesOf(second);
    expect(rows.map((r) => [r.runId, r.executionId, r.message])).toEqual([
      [first, 1, { role: 'user', content: 'one' }],
      [second, 1, { role: 'user', content: 'two' }],
      [first, 2, { role: 'user', content: 'three' }],
    ]);
    expect(rows.every((r) => r.conversationId === conversationId)).toBe(true);
    expect(rows[0].createdAt.toISOString()).toBe(at(0).toISOString());
    expect(Number(rows[1].id)).toBeGreaterThan(Number(rows[0].id));
    expect(await conversationRuns.transcriptMessagesOf(randomUUID())).toEqual([]);
    expect(await conversationRuns.transcriptMessagesOf(await run())).toEqual([]);
  });

  it('gives the time of the latest run of each skill spec of the team', async () => {
    const spec = `acme/tools:skills/${randomUUID()}/SKILL.md`;
    const other = `acme/tools:skills/${randomUUID()}/SKILL.md`;
    await run({ skillSpec: spec, createdAt: at(1) });
    await run({ skillSpec: spec, createdAt: at(3) });
    await run({ skillSpec: other, createdAt: at(2) });
    await run({ skillSpec: spec, teamId: otherTeam, createdAt: at(9) });
    await run({ createdAt: at(9) });

    const last = await latestRuns.lastRunBySkillSpec(db.teamId);
    expect(last.get(spec)?.toISOString()).toBe(at(3).toISOString());
    expect(last.get(other)?.toISOString()).toBe(at(2).toISOString());
    expect([...last.keys()].every((key) => key !== null)).toBe(true);
    expect((await latestRuns.lastRunBySkillSpec(otherTeam)).get(other)).toBeUndefined();
  });

  it("gives the team's latest run in each environment that has one", async () => {
    const [busy, idle, tied] = [newUid(), newUid(), newUid()];
    await run({ environmentId: busy, createdAt: at(1) });
    const latest = await run({ environmentId: busy, createdAt: at(4), startedAt: at(5) });
    await run({ environmentId: busy, teamId: otherTeam, createdAt: at(8) });
    const tiedIds = [
      await run({ environmentId: tied, createdAt: at(2) }),
      await run({ environmentId: tied, createdAt: at(2) }),
    ];

    const found = await latestRuns.latestByEnvironment(db.teamId, [busy, idle, tied]);
    expect([...found.keys()].sort()).toEqual([busy, tied].sort());
    expect(found.get(busy)).toEqual({
      id: latest,
      title: 'spec run',
      state: 'QUEUED',
      createdAt: at(4),
      updatedAt: expect.any(Date),
      startedAt: at(5),
    });
    expect(found.get(tied)?.id).toBe(tiedIds.sort().at(-1));
    expect(found.get(tied)?.startedAt).toBeNull();
    expect((await latestRuns.latestByEnvironment(db.teamId, [])).size).toBe(0);
  });
  it('pages through the teams with runs waiting for a slot in id order, each in turn', async () => {
    const teams = ['WaitingTeamC', 'WaitingTeamA', 'WaitingTeamB'];
    for (const teamId of teams) {
      const id = await insertRun(db.dataSource, teamId);
      await db.dataSource.query(`UPDATE runs SET at_capacity = 1 WHERE id = ?`, [id]);
    }
    // A team whose queued run does not wait for a slot, and one whose waiting run started.
    await insertRun(db.dataSource, 'WaitingTeamNot');
    const started = await insertRun(db.dataSource, 'WaitingTeamStarted', { state: 'INPROGRESS' });
    await db.dataSource.query(`UPDATE runs SET at_capacity = 1 WHERE id = ?`, [started]);
    const slots = new RunSlotRepository(db.dataSource);

    expect(await slots.teamsWaiting(2)).toEqual(['WaitingTeamA', 'WaitingTeamB']);
    expect(await slots.teamsWaiting(2, 'WaitingTeamB')).toEqual(['WaitingTeamC']);
    expect(await slots.teamsWaiting(2, 'WaitingTeamC')).toEqual([]);
  });
});
