import type { TestingModule } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Fake } from '../../../test/support/unit/fake';
import { newTestService } from '../../../test/support/unit/new-test-service';
import { eventTypes, insertRun, runRow } from '../../../test/support/unit/run-rows';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { APP_CONFIG } from '../../config/app-config';
import { PackedTransactions } from '../../database/packed-transactions';
import { AuditLog } from '../audit';
import { IdentityRunResolver } from '../identities';
import { ModelsService } from '../models';
import { NewRun } from './new-run';
import { ConversationRunRepository } from './conversation-run.repository';
import { NewRunWriter } from './new-run-writer.service';
import { NewRunRepository } from './new-run.repository';
import { RunCapacity } from './run-capacity.service';
import { RunLookupRepository } from './run-lookup.repository';
import { MAX_ORCHESTRATION_DEPTH, RunCreationService } from './run-creation.service';
import { RunQueue } from './run-queue.service';
import { realRunTransitions } from '../../../test/support/unit/run-transitions';

/**
 * RunCreationService on a real database (the run, its ancestry and `oz_run_created` are
 * committed) with identities, models and the queue faked: what a caller gets back, what is
 * refused (with the field named), and that a refused run is neither stored nor queued.
 */
describe('RunCreationService (database)', () => {
  const db = useTestDatabase('creation');
  let creation: RunCreationService;
  let queue: Fake<RunQueue>;
  let capacity: Fake<RunCapacity>;
  let module: TestingModule;

  /** The service on the test database, its collaborators faked; `retentionDays` its setting. */
  async function buildCreation(retentionDays: number) {
    const built = await newTestService(RunCreationService, [
      { provide: getDataSourceToken(), useValue: db.dataSource },
      ...realRunTransitions,
      NewRunWriter,
      NewRunRepository,
      RunLookupRepository,
      ConversationRunRepository,
      PackedTransactions,
      AuditLog,
      { provide: APP_CONFIG, useValue: { runs: { contentRetentionDays: retentionDays } } },
    ]);
    built.fakeOf(RunQueue).dispatch.mockResolvedValue(true);
    built.fakeOf(RunCapacity).atCapacityOnCreate.mockResolvedValue(false);
    built
      .fakeOf(IdentityRunResolver)
      .resolve.mockResolvedValue({ executorId: null, config: {} } as never);
    built
      .fakeOf(ModelsService)
      .resolveForRun.mockImplementation((id) => ({ id: id ?? 'fake-model' }) as never);
    return built;
  }

  beforeEach(async () => {
    const built = await buildCreation(7);
    module = built.module;
    creation = built.sut;
    queue = built.fakeOf(RunQueue);
    capacity = built.fakeOf(RunCapacity);
  });

  afterEach(() => module.close());

  const newRun = (fields: Partial<NewRun> = {}): NewRun => ({
    teamId: db.teamId,
    creatorId: null,
    source: 'API',
    prompt: 'Fix the flaky test',
    ...fields,
  });
  const runsOfTeam = async () =>
    Number(
      (
        (await db.dataSource.query(`SELECT COUNT(*) AS n FROM runs WHERE team_id = ?`, [
          db.teamId,
        ])) as { n: string }[]
      )[0].n,
    );

  it('stores a QUEUED run titled by its prompt, with its creation event, and enqueues it', async () => {
    const longLine = `Refactor ${'the module '.repeat(12)}`;
    const run = await creation.create(newRun({ prompt: `\n${longLine}\nsecond line` }));
    expect(run.state).toBe('QUEUED');
    expect(run.title).toHaveLength(80);
    expect(run.title.endsWith('…')).toBe(true);
    expect(run.modelId).toBe('fake-model');
    expect((await runRow(db.dataSource, run.id)).state).toBe('QUEUED');
    expect(await eventTypes(db.dataSource, run.id)).toEqual(['oz_run_created']);
    expect(queue.dispatch).toHaveBeenCalledWith(expect.objectContaining({ id: run.id }));
  });

  it('answers once the run is committed, without waiting for its enqueue', async () => {
    queue.dispatch.mockReturnValue(new Promise(() => undefined)); // Redis never answers
    const run = await creation.create(newRun());
    expect((await runRow(db.dataSource, run.id)).state).toBe('QUEUED');
    expect(queue.dispatch).toHaveBeenCalledWith(expect.objectContaining({ id: run.id }));
  });

  it('answers when the enqueue fails: the run stays QUEUED for the dispatch sweeper', async () => {
    queue.dispatch.mockRejectedValue(new Error('Connection is closed.'));
    const run = await creation.create(newRun());
    expect((await runRow(db.dataSource, run.id)).state).toBe('QUEUED');
  });

  it('stores a run over the concurrency limit marked at_capacity, without a job', async () => {
    capacity.atCapacityOnCreate.mockResolvedValue(true);
    const run = await creation.create(newRun());
    expect(run.atCapacity).toBe(true);
    const [row] = (await db.dataSource.query('SELECT state, at_capacity FROM runs WHERE id = ?', [
      run.id,
    ])) as { state: string; at_capacity: number }[];
    expect([row.state, Number(row.at_capacity)]).toEqual(['QUEUED', 1]);
    expect(queue.dispatch).not.toHaveBeenCalled();
    // Slots that freed while it was being stored are looked for at once.
    expect(capacity.dispatchWaiting).toHaveBeenCalledWith(db.teamId);
  });

  it.each([
    ['prompt', newRunFields({ prompt: '   ' })],
    ['config.skills', newRunFields({ skill: 'a/b:c', config: { skills: ['d/e:f'] } })],
    ['config.worker_host', newRunFields({ config: { worker_host: 'warp-lookalike' } })],
    [
      'attachments[0].data',
      newRunFields({
        attachments: [
          { fileName: 'big.bin', mimeType: 'x/y', data: Buffer.alloc(5 * 1024 * 1024 + 1) },
        ],
      }),
    ],
    ['parent_run_id', newRunFields({ parentRunId: '00000000-0000-4000-8000-000000000000' })],
  ])(
    'refuses a bad %s with invalid_request naming it, storing and queueing nothing',
    async (field, fields) => {
      const before = await runsOfTeam();
      await expect(creation.create(newRun(fields))).rejects.toMatchObject({
        code: 'invalid_request',
        status: 400,
        detail: expect.stringContaining(`${field}:`),
      });
      expect(await runsOfTeam()).toBe(before);
      expect(queue.dispatch).not.toHaveBeenCalled();
    },
  );

  it('answers 404 for a conversation the team does not have', async () => {
    await expect(
      creation.create(newRun({ conversationId: '00000000-0000-4000-8000-00000000c0de' })),
    ).rejects.toMatchObject({ code: 'resource_not_found', status: 404 });
  });

  describe('a run continuing a conversation, with the content retention on', () => {
    const deadlock = () =>
      Object.assign(new Error('Deadlock found when trying to get lock'), {
        code: 'ER_LOCK_DEADLOCK',
      });
    const runsOfConversation = async (conversationId: string) =>
      (
        (await db.dataSource.query('SELECT id FROM runs WHERE conversation_id = ? ORDER BY id', [
          conversationId,
        ])) as { id: string }[]
      ).map((row) => row.id);

    it("is tried once more when a sweep's locks made it a deadlock's victim", async () => {
      const first = await creation.create(newRun());
      const conversations = module.get(ConversationRunRepository);
      const recheck = jest
        .spyOn(conversations, 'anyContentDeleted')
        .mockRejectedValueOnce(deadlock());
      const next = await creation.create(newRun({ conversationId: first.conversationId }));
      expect(recheck).toHaveBeenCalledTimes(2);
      expect(recheck).toHaveBeenLastCalledWith(expect.anything(), [first.id]);
      expect(await runsOfConversation(first.conversationId)).toEqual([first.id, next.id].sort());
      expect(await eventTypes(db.dataSource, next.id)).toEqual(['oz_run_created']);
    });

    it('is packed with other new runs, without the second look, when the retention is off', async () => {
      const off = await buildCreation(0);
      try {
        const first = await off.sut.create(newRun());
        const recheck = jest.spyOn(off.module.get(ConversationRunRepository), 'anyContentDeleted');
        const packed = jest.spyOn(off.module.get(NewRunWriter), 'write');
        const next = await off.sut.create(newRun({ conversationId: first.conversationId }));
        expect(recheck).not.toHaveBeenCalled();
        expect(packed).toHaveBeenCalledTimes(1);
        expect(await runsOfConversation(first.conversationId)).toEqual([first.id, next.id].sort());
      } finally {
        await off.module.close();
      }
    });

    it('fails after a second deadlock, with nothing stored', async () => {
      const first = await creation.create(newRun());
      const conversations = module.get(ConversationRunRepository);
      jest
        .spyOn(conversations, 'anyContentDeleted')
        .mockRejectedValueOnce(deadlock())
        .mockRejectedValueOnce(deadlock());
      await expect(
        creation.create(newRun({ conversationId: first.conversationId })),
      ).rejects.toMatchObject({ code: 'ER_LOCK_DEADLOCK' });
      expect(await runsOfConversation(first.conversationId)).toEqual([first.id]);
      expect(queue.dispatch).toHaveBeenCalledTimes(1);
    });
  });

  it('makes a child run of a parent: one level deeper, same root, ORCHESTRATION, inherited metadata', async () => {
    const parent = await creation.create(newRun({ metadata: { ticket: 'T-1', team: 'core' } }));
    const child = await creation.create(
      newRun({ parentRunId: parent.id, metadata: { team: 'infra' } }),
    );
    expect(child).toMatchObject({
      parentRunId: parent.id,
      rootRunId: parent.id,
      depth: 1,
      source: 'ORCHESTRATION',
      metadata: { ticket: 'T-1', team: 'infra' },
    });
    const ancestors = (await db.dataSource.query(
      `SELECT ancestor_id FROM run_ancestors WHERE run_id = ?`,
      [child.id],
    )) as { ancestor_id: string }[];
    expect(ancestors.map((a) => a.ancestor_id)).toEqual([parent.id]);
  });

  it('refuses a child beyond the maximum orchestration depth', async () => {
    const deep = await insertRun(db.dataSource, db.teamId, { state: 'SUCCEEDED' });
    await db.dataSource.query(`UPDATE runs SET depth = ? WHERE id = ?`, [
      MAX_ORCHESTRATION_DEPTH,
      deep,
    ]);
    await expect(creation.create(newRun({ parentRunId: deep }))).rejects.toMatchObject({
      code: 'invalid_request',
      detail: expect.stringContaining(`maximum orchestration depth of ${MAX_ORCHESTRATION_DEPTH}`),
    });
  });
});

/** Fields of a bad NewRun, typed (it.each tables lose the type otherwise). */
function newRunFields(fields: Partial<NewRun>): Partial<NewRun> {
  return fields;
}
