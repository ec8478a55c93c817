import { SchedulerRegistry } from '@nestjs/schedule';
import type { DataSource, EntityManager } from 'typeorm';
import type { AppConfig } from '../../config/app-config';
import type { RunArtifactRepository } from '../artifacts';
import type { BlobStore } from '../blobs';
import type { RunContentDeletion, RunContentRepository } from '../runs';
import type { PendingBlobDeletionRepository } from './pending-blob-deletion.repository';
import { RunContentRetentionSweeper } from './run-content-retention.sweeper';
import type { SweepPositionRepository, WalkPosition } from './sweep-position.repository';

const ENDED = new Date('2026-01-01T00:00:00.000Z');

/** The shared walk positions, as the replicas' sweepers see them (one table row per sweep). */
function positionsTable() {
  const rows = new Map<string, WalkPosition>();
  return {
    rows,
    repository: {
      get: (name: string) => Promise.resolve(rows.get(name)),
      set: (name: string, position: WalkPosition | undefined) => {
        if (position) rows.set(name, position);
        else rows.delete(name);
        return Promise.resolve();
      },
    } as unknown as SweepPositionRepository,
  };
}

/** The pending blob deletions, recording and empty. */
function pendingDeletions() {
  return {
    add: jest.fn().mockResolvedValue(undefined),
    oldest: jest.fn().mockResolvedValue([]),
    remove: jest.fn().mockResolvedValue(undefined),
  };
}

/** A sweeper on fakes: `content` as given, `pending` recording, the rest doing nothing. */
function sweeperWith(
  content: Partial<Record<keyof RunContentRepository, jest.Mock>>,
  pending = pendingDeletions(),
  positions = positionsTable().repository,
) {
  const dataSource = {
    options: { database: 'ambient' },
    // The sweep's named lock, always free here.
    createQueryRunner: () => ({
      connect: () => Promise.resolve(),
      query: () => Promise.resolve([{ locked: 1 }]),
      release: () => Promise.resolve(),
    }),
    transaction: (work: (manager: EntityManager) => Promise<unknown>) => work({} as EntityManager),
  };
  return new RunContentRetentionSweeper(
    dataSource as unknown as DataSource,
    content as unknown as RunContentRepository,
    { deleteStoredOfRuns: jest.fn().mockResolvedValue([]) } as unknown as RunArtifactRepository,
    pending as unknown as PendingBlobDeletionRepository,
    positions,
    {} as BlobStore,
    { runs: { contentRetentionDays: 30 } } as AppConfig,
    new SchedulerRegistry(),
  );
}

describe('RunContentRetentionSweeper', () => {
  it('goes on where the last sweep of any replica stopped, and from the oldest again once it reached the newest', async () => {
    // Every run listed belongs to one conversation that goes on: nothing is ever deleted.
    const page = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => ({
        id: `run-${String(from + i).padStart(5, '0')}`,
        conversationId: 'going-on',
        finishedAt: ENDED,
      }));
    let served = 0;
    const endedBefore = jest.fn((_cutoff: Date, _limit: number, _after?: unknown) => {
      // 5 000 runs a sweep at most: the first sweep gets 50 full pages, the second one short.
      const count = served < 5_000 ? 100 : 40;
      const runs = page(served, count);
      served += count;
      return Promise.resolve(runs);
    });
    const positions = positionsTable();
    // Two replicas' sweepers: each goes on where the other stopped.
    const [first, second] = [1, 2].map(() =>
      sweeperWith(
        { endedBefore, conversationDue: jest.fn().mockResolvedValue(false) },
        undefined,
        positions.repository,
      ),
    );
    const now = new Date('2026-06-01T00:00:00.000Z');
    await first.sweep(now);
    expect(endedBefore).toHaveBeenCalledTimes(50);
    expect(endedBefore.mock.calls[0]).toEqual([expect.any(Date), 100, undefined]);
    expect(positions.rows.get('content_retention')).toMatchObject({ id: 'run-04999' });
    await second.sweep(now);
    // The second sweep starts after the last run the first one looked at, and ends at the newest.
    expect(endedBefore.mock.calls[50][2]).toEqual({
      id: 'run-04999',
      conversationId: 'going-on',
      finishedAt: ENDED,
    });
    expect(endedBefore).toHaveBeenCalledTimes(51);
    expect(positions.rows.size).toBe(0);
    await first.sweep(now);
    expect(endedBefore.mock.calls[51][2]).toBeUndefined();
  });

  it('goes on with the other conversations when one of them fails', async () => {
    const content = {
      endedBefore: jest.fn().mockResolvedValue([
        { id: 'run-a', conversationId: 'conv-a', finishedAt: ENDED },
        { id: 'run-b', conversationId: 'conv-b', finishedAt: ENDED },
      ]),
      markConversationDeleted: jest.fn(
        (_m: EntityManager, conversationId: string): Promise<RunContentDeletion[]> =>
          conversationId === 'conv-a'
            ? Promise.reject(new Error('Lock wait timeout exceeded'))
            : Promise.resolve([{ id: 'run-b', conversationId, executionCount: 1 }]),
      ),
      deleteContent: jest.fn().mockResolvedValue(undefined),
      conversationDue: jest.fn().mockResolvedValue(true),
    };
    const pending = pendingDeletions();
    const sweeper = sweeperWith(content, pending);
    expect(await sweeper.sweep(new Date('2026-06-01T00:00:00.000Z'))).toBe(1);
    expect(content.deleteContent).toHaveBeenCalledWith({}, ['run-b']);
    expect(pending.add.mock.calls[0][1]).toContain('transcripts/run-run-b-execution-1-raw.jsonl');
  });

  it('goes on sweeping, and deletes pending blobs, when its walk position cannot be recorded', async () => {
    const content = {
      endedBefore: jest
        .fn()
        .mockResolvedValue([{ id: 'run-a', conversationId: 'conv-a', finishedAt: ENDED }]),
      markConversationDeleted: jest
        .fn()
        .mockResolvedValue([{ id: 'run-a', conversationId: 'conv-a', executionCount: 1 }]),
      deleteContent: jest.fn().mockResolvedValue(undefined),
      conversationDue: jest.fn().mockResolvedValue(true),
    };
    const pending = pendingDeletions();
    const positions = {
      get: jest.fn().mockResolvedValue(undefined),
      set: jest.fn().mockRejectedValue(new Error('Lock wait timeout exceeded')),
    } as unknown as SweepPositionRepository;
    const sweeper = sweeperWith(content, pending, positions);
    expect(await sweeper.sweep(new Date('2026-06-01T00:00:00.000Z'))).toBe(1);
    expect(positions.set).toHaveBeenCalled();
    expect(pending.oldest).toHaveBeenCalled();
  });
});
