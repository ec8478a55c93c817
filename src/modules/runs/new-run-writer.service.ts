import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CoalescingBatcher } from '../../common/coalescing-batcher';
import { newUuid } from '../../common/ids';
import { Run } from './entities/run.entity';
import { RunEvent } from './entities/run-event.entity';
import { RunMetadata } from './entities/run-metadata.entity';

/** The event every run's timeline starts with. */
export const RUN_CREATED_EVENT = 'oz_run_created';

/**
 * Commits new runs that stand alone (no parent, no attachments): the run, its metadata pairs and
 * its `oz_run_created` event. Creations that arrive while a commit is under way share the next
 * one — one transaction with one multi-row INSERT per table — so under load the database work
 * per run shrinks to a fraction of a statement; a lone creation still commits at once. Each
 * caller is answered only after the transaction holding its run has committed; if it fails,
 * every run of that batch fails with it and none is stored.
 */
@Injectable()
export class NewRunWriter {
  private readonly batcher = new CoalescingBatcher<Run, void>((runs) => this.insert(runs), {
    maxBatch: 100,
    maxInFlight: 2,
  });

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  write(run: Run): Promise<void> {
    return this.batcher.submit(run);
  }

  private async insert(runs: Run[]): Promise<void[]> {
    const metadata = runs.flatMap((run) =>
      Object.entries(run.metadata ?? {}).map(([key, value]) => ({
        runId: run.id,
        teamId: run.teamId,
        key,
        value,
      })),
    );
    const events = runs.map((run) => ({
      eventUuid: newUuid(),
      runId: run.id,
      executionId: null,
      eventType: RUN_CREATED_EVENT,
      occurredAt: run.createdAt,
      payload: { source: run.source },
    }));
    await this.dataSource.transaction(async (manager) => {
      const insert = <T>(entity: new () => T, rows: Partial<T>[]) =>
        manager
          .createQueryBuilder()
          .insert()
          .into(entity)
          .values(rows as never)
          .updateEntity(false)
          .execute();
      await insert(Run, runs);
      if (metadata.length) await insert(RunMetadata, metadata);
      await insert(RunEvent, events);
    });
    return runs.map(() => undefined);
  }
}
