import { Injectable } from '@nestjs/common';
import { CoalescingBatcher } from '../../common/coalescing-batcher';
import { PackedTransactions } from '../../database/packed-transactions';
import type { Statement } from '../../database/raw-sql';
import type { AuditEvent } from '../audit';
import { AuditLog } from '../audit';
import { isBackingServiceUnavailable } from '../../common/errors/unavailable';
import { newUuid } from '../../common/ids';
import {
  answersStatement,
  claimLost,
  IdempotentAnswer,
  lockAnswers,
  markRecorded,
} from '../idempotency';
import { Run } from './entities/run.entity';
import { NewRunRepository } from './new-run.repository';

/** How many times a batch whose connection broke is looked up before its error stands. */
const CONFIRM_ATTEMPTS = 3;

/** The event every run's timeline starts with. */
export const RUN_CREATED_EVENT = 'oz_run_created';

/** A run to commit, with the answer of its request's `Idempotency-Key` when it sent one. */
interface PendingRun {
  run: Run;
  answer?: IdempotentAnswer;
  /** Its `run.create` audit event (made while its request was the current one). */
  event?: AuditEvent;
}

/**
 * Commits new runs that stand alone (no parent, no attachments, no caller-chosen id): the run,
 * its metadata pairs and its `oz_run_created` event. Creations that arrive while a commit is under
 * way share the next one — one transaction with one multi-row INSERT per table, sent to MySQL
 * as one packet (PackedTransactions) — so under load the database work per run shrinks to a
 * fraction of a statement and a batch waits for one round trip; a lone creation still commits
 * at once. Each caller is answered only after the transaction holding its run has committed; if
 * it fails, every run of that batch fails with it and none is stored. An `Idempotency-Key`'s
 * answer commits in the same transaction as its run; a run whose key another request took over
 * (its claim lapsed) is left out of the batch and refused alone.
 */
@Injectable()
export class NewRunWriter {
  private readonly batcher = new CoalescingBatcher<PendingRun, Error | null>(
    (items) => this.insert(items),
    { maxBatch: 100, maxInFlight: 2 },
  );

  constructor(
    private readonly newRuns: NewRunRepository,
    private readonly audit: AuditLog,
    private readonly packed: PackedTransactions,
  ) {}

  async write(run: Run, answer?: IdempotentAnswer, event?: AuditEvent): Promise<void> {
    const refused = await this.batcher.submit({ run, answer, event });
    if (refused) throw refused;
    if (answer) markRecorded([answer]);
  }

  private async insert(items: PendingRun[]): Promise<(Error | null)[]> {
    const answered = items.filter((item) => item.answer);
    let refused = new Set<PendingRun>();
    let runs = items.map((item) => item.run);
    try {
      // One round trip without Idempotency-Keys (START … COMMIT in one packet), two with.
      await this.packed.run(async (tx) => {
        const lost = await lockAnswers(
          tx,
          answered.map((item) => item.answer!),
        );
        refused = new Set(answered.filter((_, i) => lost.has(i)));
        const kept = items.filter((item) => !refused.has(item));
        runs = kept.map((item) => item.run);
        const answers = answersStatement(kept.flatMap((item) => item.answer ?? []));
        await tx.add([
          ...(answers ? [answers] : []),
          ...this.insertStatements(runs),
          ...this.audit.insertStatements(kept.flatMap((item) => item.event ?? [])),
        ]);
      });
    } catch (err) {
      if (!isBackingServiceUnavailable(err) || !(await this.committedAnyway(runs))) throw err;
    }
    return items.map((item) => (refused.has(item) ? claimLost(item.answer!.claim) : null));
  }

  /** The runs, their metadata pairs and `oz_run_created` events, one multi-row INSERT per table. */
  private insertStatements(runs: Run[]): Statement[] {
    if (!runs.length) return [];
    const events = runs.map((run) => ({
      eventUuid: newUuid(),
      runId: run.id,
      executionId: null,
      eventType: RUN_CREATED_EVENT,
      occurredAt: run.createdAt,
      payload: { source: run.source },
    }));
    return this.newRuns.insertStatements(runs, events);
  }

  /**
   * The connection broke during the transaction — possibly after MySQL committed it but before
   * its answer arrived. Answering 503 then would be a lie (the run exists and will be executed,
   * and the client's retry would create it twice), so look: the ids are fresh UUIDs, so a row
   * means this batch committed. The read locks the rows, so it waits for a commit the killed
   * connection's server thread may still be finishing. If MySQL cannot be asked, the error stands.
   */
  private async committedAnyway(runs: Run[]): Promise<boolean> {
    if (!runs.length) return false;
    for (let attempt = 0; attempt < CONFIRM_ATTEMPTS; attempt += 1) {
      try {
        return await this.newRuns.anyStored(runs.map((run) => run.id));
      } catch {
        // The pool may still hand out a dead connection; the next attempt takes another.
      }
    }
    return false;
  }
}
