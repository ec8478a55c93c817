import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { waitFor } from '../../../test/support/wait';
import { AmbientMetrics } from '../metrics';
import { RunAppends, RunLeaseRepository } from '../runs';
import { ExecutionFence, ExecutionToken, StaleExecutionError } from './execution-fence';

/**
 * ExecutionFence against a throw-away MariaDB/MySQL database on 127.0.0.1:3306 (root, no password,
 * or DATABASE_HOST/PORT/USER/PASSWORD): a current token's write commits, a stale one's changes
 * nothing, and a takeover cannot slip in between a fenced write's check and its commit.
 */
const WORKER_A = 'host:1:aaaaaa';
const WORKER_B = 'host:2:bbbbbb';

describe('ExecutionFence (database)', () => {
  const db = useTestDatabase('fence');
  const TEAM = db.teamId;
  let dataSource: DataSource;
  let metrics: AmbientMetrics;
  let fence: ExecutionFence;
  let hints: string[];

  beforeEach(() => {
    dataSource = db.dataSource;
    metrics = new AmbientMetrics();
    hints = [];
    const changes = { rowsAdded: (runId: string, kind: string) => hints.push(`${runId}:${kind}`) };
    const appends = new RunAppends(
      dataSource,
      changes as unknown as ConstructorParameters<typeof RunAppends>[1],
    );
    fence = new ExecutionFence(dataSource, metrics, new RunLeaseRepository(dataSource), appends);
  });

  /** A run as a worker's claim leaves it: `executionCount` executions, held by `owner`. */
  async function claimedRun(
    owner: string | null,
    executionCount: number,
    state = 'INPROGRESS',
  ): Promise<string> {
    const id = randomUUID();
    const now = new Date();
    await dataSource.query(
      `INSERT INTO runs (id, team_id, title, prompt, state, source, config, root_run_id,
         conversation_id, execution_count, attempt, lease_owner, created_at, updated_at)
       VALUES (?, ?, 'fenced', 'p', ?, 'API', '{}', ?, ?, ?, ?, ?, ?, ?)`,
      [id, TEAM, state, id, id, executionCount, executionCount, owner, now, now],
    );
    return id;
  }

  /** What the sweeper and a second worker do to a run whose lease lapsed. */
  const takeOver = (runId: string, owner: string) =>
    dataSource.query(
      `UPDATE /* fence-takeover */ runs SET execution_count = execution_count + 1, lease_owner = ?
        WHERE id = ?`,
      [owner, runId],
    );

  const insertMessage = (token: ExecutionToken, text: string) =>
    fence.write(token, 'message', (manager) =>
      manager.query(
        `INSERT INTO run_messages (run_id, execution_id, message, created_at) VALUES (?, ?, ?, ?)`,
        [
          token.runId,
          token.executionId,
          JSON.stringify({ role: 'assistant', content: text }),
          new Date(),
        ],
      ),
    );

  const messagesOf = async (runId: string) =>
    (
      (await dataSource.query(
        'SELECT execution_id AS executionId, message FROM run_messages WHERE run_id = ? ORDER BY id',
        [runId],
      )) as { executionId: number; message: string | { content: string } }[]
    ).map((m) => ({
      executionId: m.executionId,
      content: (typeof m.message === 'string' ? JSON.parse(m.message) : m.message).content,
    }));

  const staleWrites = async () =>
    (await metrics.scrape())
      .split('\n')
      .filter((line) => line.startsWith('ambient_stale_execution_writes_total{'));

  it('lets the execution holding the run write', async () => {
    const runId = await claimedRun(WORKER_A, 1);
    await insertMessage({ runId, executionId: 1, holder: { lease: WORKER_A } }, 'mine');
    expect(await messagesOf(runId)).toEqual([{ executionId: 1, content: 'mine' }]);
    expect(await staleWrites()).toEqual([]);
  });

  it('refuses, counts and aborts the write of an execution whose run was taken over', async () => {
    const runId = await claimedRun(WORKER_A, 1);
    let aborted = 0;
    const stale: ExecutionToken = {
      runId,
      executionId: 1,
      holder: { lease: WORKER_A },
      onStale: () => aborted++,
    };
    await takeOver(runId, WORKER_B);
    await insertMessage({ runId, executionId: 2, holder: { lease: WORKER_B } }, 'the new one');

    await expect(insertMessage(stale, 'late tool call')).rejects.toBeInstanceOf(
      StaleExecutionError,
    );
    expect(await messagesOf(runId)).toEqual([{ executionId: 2, content: 'the new one' }]);
    expect(aborted).toBe(1);
    expect(await staleWrites()).toEqual([
      'ambient_stale_execution_writes_total{write="message"} 1',
    ]);
  });

  it('refuses the same worker writing for an execution it no longer holds', async () => {
    // Worker A lost execution 1 and claimed the run again as execution 2: its worker id alone
    // would still match, the execution id does not.
    const runId = await claimedRun(WORKER_A, 1);
    await takeOver(runId, WORKER_A);
    const old = { runId, executionId: 1, holder: { lease: WORKER_A } };
    await expect(insertMessage(old, 'from execution 1')).rejects.toBeInstanceOf(
      StaleExecutionError,
    );
    await expect(fence.check(old, 'transcript')).rejects.toBeInstanceOf(StaleExecutionError);
    expect(await messagesOf(runId)).toEqual([]);
  });

  it('refuses writes once the run ended', async () => {
    const ended = await claimedRun(null, 1, 'SUCCEEDED');
    await expect(
      insertMessage({ runId: ended, executionId: 1, holder: { lease: WORKER_A } }, 'after end'),
    ).rejects.toBeInstanceOf(StaleExecutionError);
    expect(await messagesOf(ended)).toEqual([]);
  });

  it('lets a cancelled execution close (its transcript), but not one whose run moved on', async () => {
    const cancelled = await claimedRun(null, 2, 'CANCELLED');
    const mine = { runId: cancelled, executionId: 2, holder: { lease: WORKER_A } };
    await expect(fence.check(mine, 'transcript')).rejects.toBeInstanceOf(StaleExecutionError);
    await fence.check(mine, 'transcript', { orCancelledHere: true });
    const earlier = { ...mine, executionId: 1 };
    await expect(
      fence.check(earlier, 'transcript', { orCancelledHere: true }),
    ).rejects.toBeInstanceOf(StaleExecutionError);
  });

  it('keeps a takeover waiting until a fenced write that passed its check has committed', async () => {
    const runId = await claimedRun(WORKER_A, 1);
    const token = { runId, executionId: 1, holder: { lease: WORKER_A } };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let checked!: () => void;
    const inside = new Promise<void>((resolve) => (checked = resolve));
    const write = fence.write(token, 'message', async (manager) => {
      checked();
      await gate;
      await manager.query(
        `INSERT INTO run_messages (run_id, execution_id, message, created_at) VALUES (?, ?, '{"content":"in time"}', ?)`,
        [runId, 1, new Date()],
      );
    });
    await inside;
    // While the fenced write holds its share lock on the run row, a takeover cannot commit: with a
    // 1 s lock wait (MySQL's own timeout, no sleep here) it is refused rather than slipping in.
    const other = dataSource.createQueryRunner();
    try {
      await other.query('SET SESSION innodb_lock_wait_timeout = 1');
      await expect(
        other.query(`UPDATE runs SET execution_count = execution_count + 1 WHERE id = ?`, [runId]),
      ).rejects.toThrow(/Lock wait timeout/);
    } finally {
      // The connection goes back to the pool: a 1 s lock wait left on it would make a later test's
      // append (which must wait for a takeover) give up after a second.
      await other.query('SET SESSION innodb_lock_wait_timeout = DEFAULT');
      await other.release();
      release();
    }
    await write;
    await takeOver(runId, WORKER_B);
    expect(await messagesOf(runId)).toEqual([{ executionId: 1, content: 'in time' }]);
    await expect(insertMessage(token, 'too late')).rejects.toBeInstanceOf(StaleExecutionError);
  });

  it('fences a command key to a service worker execution and a debug agent to its failed run', async () => {
    const running = await claimedRun(WORKER_A, 3);
    await insertMessage({ runId: running, executionId: 3, holder: 'run-key' }, 'artifact');
    await expect(
      insertMessage({ runId: running, executionId: 2, holder: 'run-key' }, 'old key'),
    ).rejects.toBeInstanceOf(StaleExecutionError);
    const selfHosted = await claimedRun('key:SomeKeyId', 1);
    await expect(
      insertMessage({ runId: selfHosted, executionId: 1, holder: 'run-key' }, 'not a worker'),
    ).rejects.toBeInstanceOf(StaleExecutionError);

    const failed = await claimedRun(null, 1, 'FAILED');
    const debug: ExecutionToken = { runId: failed, executionId: 1, holder: 'debug-agent' };
    await insertMessage(debug, 'debugging');
    await takeOver(failed, WORKER_B); // a continuation claimed the run
    await expect(insertMessage(debug, 'still debugging')).rejects.toBeInstanceOf(
      StaleExecutionError,
    );
    expect(await messagesOf(failed)).toEqual([{ executionId: 1, content: 'debugging' }]);
  });

  it('appends messages and events in order in one fenced statement, all or none', async () => {
    const runId = await claimedRun(WORKER_A, 1);
    const token = { runId, executionId: 1, holder: { lease: WORKER_A } };
    await fence.appendMessages(token, [
      { role: 'assistant', content: 'first' },
      { role: 'tool', content: 'second' },
      { role: 'assistant', content: 'third' },
    ]);
    await fence.appendEvents(token, [
      { eventType: 'one', payload: { n: 1 } },
      { eventType: 'two', payload: null },
    ]);
    expect(await messagesOf(runId)).toEqual(
      ['first', 'second', 'third'].map((content) => ({ executionId: 1, content })),
    );
    const events = (await dataSource.query(
      'SELECT execution_id AS executionId, event_type AS type, payload FROM run_events WHERE run_id = ? ORDER BY id',
      [runId],
    )) as { executionId: number; type: string; payload: unknown }[];
    expect(events.map((e) => [e.executionId, e.type])).toEqual([
      [1, 'one'],
      [1, 'two'],
    ]);
    expect(hints).toEqual([`${runId}:message`, `${runId}:timeline`]);

    await takeOver(runId, WORKER_B);
    await expect(
      fence.appendMessages(token, [{ role: 'assistant', content: 'late' }]),
    ).rejects.toBeInstanceOf(StaleExecutionError);
    await expect(fence.appendEvents(token, [{ eventType: 'late' }])).rejects.toBeInstanceOf(
      StaleExecutionError,
    );
    expect((await messagesOf(runId)).length).toBe(3);
    expect(hints.length).toBe(2);
    expect((await staleWrites()).sort()).toEqual([
      'ambient_stale_execution_writes_total{write="event"} 1',
      'ambient_stale_execution_writes_total{write="message"} 1',
    ]);
  });

  it('makes a fenced append wait for a takeover in progress, then refuses it', async () => {
    const runId = await claimedRun(WORKER_A, 1);
    const token = { runId, executionId: 1, holder: { lease: WORKER_A } };
    const takeover = dataSource.createQueryRunner();
    try {
      await takeover.startTransaction();
      await takeover.query(
        `UPDATE runs SET execution_count = execution_count + 1, lease_owner = ? WHERE id = ?`,
        [WORKER_B, runId],
      );
      const append = fence.appendMessages(token, [{ role: 'assistant', content: 'racing' }]);
      const settled = append.then(
        () => 'written',
        (err: Error) => (err instanceof StaleExecutionError ? 'refused' : `failed: ${err.message}`),
      );
      // The append's locking read waits for the takeover's row lock: it must not settle while the
      // takeover is open. The wait is looked for in INNODB_TRX, so that the append is known to
      // have reached the server before the takeover commits; on a loaded machine that look-up
      // may not see it (a CI run once polled 20 s in vain), so not seeing it is no failure:
      // settling before the commit is.
      let committing = false;
      let settledBeforeCommit = false;
      void settled.then(() => (settledBeforeCommit = !committing));
      await waitFor(
        async () =>
          settledBeforeCommit ||
          Number(
            (
              (await dataSource.query(
                `SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX
                  WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE 'INSERT INTO run_messages%'`,
              )) as { n: string | number }[]
            )[0].n,
          ) > 0,
        (done) => done,
        { timeoutMs: 10_000, intervalMs: 5, what: "the append to wait for the takeover's lock" },
      ).catch(() => undefined);
      expect(settledBeforeCommit).toBe(false);
      committing = true;
      await takeover.commitTransaction();
      expect(await settled).toBe('refused');
    } finally {
      if (takeover.isTransactionActive) await takeover.rollbackTransaction();
      await takeover.release();
    }
    expect(await messagesOf(runId)).toEqual([]);
  });

  it('guards state transitions with the token', async () => {
    const runId = await claimedRun(WORKER_A, 1);
    await takeOver(runId, WORKER_B);
    const guard = ExecutionFence.transitionGuard({
      runId,
      executionId: 1,
      holder: { lease: WORKER_A },
    });
    const result = await dataSource
      .createQueryBuilder()
      .update('runs')
      .set({ state: 'SUCCEEDED' })
      .where('id = :runId', { runId })
      .andWhere(guard.sql, guard.params)
      .execute();
    expect(result.affected).toBe(0);
    const [row] = (await dataSource.query('SELECT state FROM runs WHERE id = ?', [runId])) as {
      state: string;
    }[];
    expect(row.state).toBe('INPROGRESS');
  });
});
