import { randomUUID } from 'node:crypto';
import { insertRun } from '../../../test/support/unit/run-rows';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { ConversationRunRepository } from './conversation-run.repository';

/** A new run's check of its conversation on a real server: what it sees, and what it waits for. */
describe('ConversationRunRepository (database)', () => {
  const db = useTestDatabase('conversation_runs');

  async function conversationOf(runId: string): Promise<string> {
    const [row] = (await db.dataSource.query('SELECT conversation_id FROM runs WHERE id = ?', [
      runId,
    ])) as { conversation_id: string }[];
    return row.conversation_id;
  }

  it("lists a conversation's runs with their team and the retention's mark", async () => {
    const first = await insertRun(db.dataSource, db.teamId, { state: 'SUCCEEDED' });
    const conversationId = await conversationOf(first);
    const second = await insertRun(db.dataSource, db.teamId, { state: 'SUCCEEDED' });
    await db.dataSource.query(
      'UPDATE runs SET conversation_id = ?, content_deleted_at = UTC_TIMESTAMP(3) WHERE id = ?',
      [conversationId, second],
    );
    const runs = await new ConversationRunRepository(db.dataSource).runsOf(conversationId);
    expect(runs.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [
        { id: first, teamId: db.teamId, contentDeleted: false },
        { id: second, teamId: db.teamId, contentDeleted: true },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );
  });

  it('does not wait for another new run being inserted into the same conversation', async () => {
    const repository = new ConversationRunRepository(db.dataSource);
    const existing = await insertRun(db.dataSource, db.teamId, { state: 'SUCCEEDED' });
    const conversationId = await conversationOf(existing);
    const earlier = await insertRun(db.dataSource, db.teamId, { state: 'SUCCEEDED' });
    await db.dataSource.query('UPDATE runs SET conversation_id = ? WHERE id = ?', [
      conversationId,
      earlier,
    ]);
    const other = db.dataSource.createQueryRunner();
    const mine = db.dataSource.createQueryRunner();
    await other.connect();
    await mine.connect();
    try {
      // Another request's new run in the conversation, inserted and not committed yet.
      await other.startTransaction();
      const pendingId = randomUUID();
      await other.query(
        `INSERT INTO runs (id, team_id, title, prompt, state, source, config, root_run_id,
           conversation_id, execution_count, attempt, created_at, updated_at)
         VALUES (?, ?, 'pending', 'go on', 'QUEUED', 'API', '{}', ?, ?, 0, 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))`,
        [pendingId, db.teamId, pendingId, conversationId],
      );
      // A wait would fail this read after a second instead of answering.
      await mine.query('SET SESSION innodb_lock_wait_timeout = 1');
      await mine.startTransaction();
      expect(await repository.anyContentDeleted(mine.manager, [existing, earlier])).toBe(false);
      await mine.commitTransaction();
      await other.rollbackTransaction();
    } finally {
      // The pool's connection goes back with the server's own timeout.
      await mine.query('SET SESSION innodb_lock_wait_timeout = DEFAULT');
      await mine.release();
      await other.release();
    }
  });

  it('sees a mark committed after its transaction began', async () => {
    const repository = new ConversationRunRepository(db.dataSource);
    const existing = await insertRun(db.dataSource, db.teamId, { state: 'SUCCEEDED' });
    const mine = db.dataSource.createQueryRunner();
    await mine.connect();
    try {
      await mine.startTransaction();
      // The transaction's snapshot is taken before the sweep's mark.
      await mine.query('SELECT id FROM runs WHERE id = ?', [existing]);
      await db.dataSource.query(
        'UPDATE runs SET content_deleted_at = UTC_TIMESTAMP(3) WHERE id = ?',
        [existing],
      );
      expect(await repository.anyContentDeleted(mine.manager, [existing])).toBe(true);
      await mine.rollbackTransaction();
    } finally {
      await mine.release();
    }
  });

  it("locks only the runs it reads: other runs' ends and marks do not wait for it", async () => {
    const repository = new ConversationRunRepository(db.dataSource);
    const [first, second, elsewhere, marked] = [
      await insertRun(db.dataSource, db.teamId, { state: 'SUCCEEDED' }),
      await insertRun(db.dataSource, db.teamId, { state: 'SUCCEEDED' }),
      await insertRun(db.dataSource, db.teamId, { state: 'INPROGRESS' }),
      await insertRun(db.dataSource, db.teamId, { state: 'SUCCEEDED' }),
    ];
    // A run marked long ago, so the retention's index has something in it.
    await db.dataSource.query(
      'UPDATE runs SET content_deleted_at = UTC_TIMESTAMP(3) WHERE id = ?',
      [marked],
    );
    const mine = db.dataSource.createQueryRunner();
    const other = db.dataSource.createQueryRunner();
    await mine.connect();
    await other.connect();
    try {
      await mine.startTransaction();
      expect(await repository.anyContentDeleted(mine.manager, [first, second])).toBe(false);
      // A wait would fail these after a second instead of answering.
      await other.query('SET SESSION innodb_lock_wait_timeout = 1');
      await other.query(
        "UPDATE runs SET state = 'SUCCEEDED', finished_at = UTC_TIMESTAMP(3) WHERE id = ?",
        [elsewhere],
      );
      await other.query('UPDATE runs SET content_deleted_at = UTC_TIMESTAMP(3) WHERE id = ?', [
        elsewhere,
      ]);
      await mine.commitTransaction();
    } finally {
      await other.query('SET SESSION innodb_lock_wait_timeout = DEFAULT');
      await other.release();
      await mine.release();
    }
  });
});
