import { SchedulerRegistry } from '@nestjs/schedule';
import type { DataSource, EntityManager } from 'typeorm';
import type { AppConfig } from '../../config/app-config';
import type { RunArtifactRepository } from '../artifacts';
import type { BlobStore } from '../blobs';
import type { RunContentDeletion, RunContentRepository } from '../runs';
import type { PendingBlobDeletionRepository } from './pending-blob-deletion.repository';
import { RunContentRetentionSweeper } from './run-content-retention.sweeper';

describe('RunContentRetentionSweeper', () => {
  it('goes on with the other conversations when one of them fails', async () => {
    const ended = new Date('2026-01-01T00:00:00.000Z');
    const content = {
      endedBefore: jest.fn().mockResolvedValue([
        { id: 'run-a', conversationId: 'conv-a', finishedAt: ended },
        { id: 'run-b', conversationId: 'conv-b', finishedAt: ended },
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
    const pending = {
      add: jest.fn().mockResolvedValue(undefined),
      oldest: jest.fn().mockResolvedValue([]),
      remove: jest.fn().mockResolvedValue(undefined),
    };
    const dataSource = {
      transaction: (work: (manager: EntityManager) => Promise<unknown>) =>
        work({} as EntityManager),
    };
    const sweeper = new RunContentRetentionSweeper(
      dataSource as unknown as DataSource,
      content as unknown as RunContentRepository,
      { deleteStoredOfRuns: jest.fn().mockResolvedValue([]) } as unknown as RunArtifactRepository,
      pending as unknown as PendingBlobDeletionRepository,
      {} as BlobStore,
      { runs: { contentRetentionDays: 30 } } as AppConfig,
      new SchedulerRegistry(),
    );
    expect(await sweeper.sweep(new Date('2026-06-01T00:00:00.000Z'))).toBe(1);
    expect(content.deleteContent).toHaveBeenCalledWith({}, ['run-b']);
    expect(pending.add.mock.calls[0][1]).toContain('transcripts/run-run-b-execution-1-raw.jsonl');
  });
});
