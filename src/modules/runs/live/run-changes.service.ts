import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import Redis from 'ioredis';
import {
  DataSource,
  EntityManager,
  EntitySubscriberInterface,
  InsertEvent,
  QueryRunner,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';
import { REDIS, RedisConnections } from '../../../common/redis/redis.module';
import { RunArtifact } from '../../artifacts';
import { RunEvent } from '../entities/run-event.entity';
import { RunMessage } from '../entities/run-message.entity';
import { RUN_CREATED_EVENT } from '../new-run-writer.service';

/** What changed about a run: its row (state, status, usage), its timeline, its conversation. */
export const CHANGE_KINDS = ['run', 'timeline', 'message'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export interface RunChange {
  runId: string;
  kinds: ChangeKind[];
}

/** Rows whose insert changes what a stream shows (an artifact is part of the RunItem). */
const KIND_OF_INSERT = new Map<unknown, ChangeKind>([
  [RunEvent, 'timeline'],
  [RunMessage, 'message'],
  [RunArtifact, 'run'],
]);

/** The pub/sub channel of a deployment (its Redis prefix); one for every run. */
export function runChangesChannel(prefix: string): string {
  return `${prefix}:run-changes`;
}

export function encodeRunChange(change: RunChange): string {
  return JSON.stringify({ run_id: change.runId, kinds: change.kinds });
}

export function decodeRunChange(text: string): RunChange | null {
  try {
    const value = JSON.parse(text) as { run_id?: unknown; kinds?: unknown };
    if (typeof value.run_id !== 'string' || !Array.isArray(value.kinds)) return null;
    const kinds = CHANGE_KINDS.filter((k) => (value.kinds as unknown[]).includes(k));
    return kinds.length ? { runId: value.run_id, kinds } : null;
  } catch {
    return null;
  }
}

/**
 * Announces changes of runs on Redis, for the live streams of every API replica. A message is a
 * hint ("run X's timeline changed"); streams read what changed from the database, so a hint must
 * only go out once the change is visible there: inside a transaction it waits for the commit (and
 * is dropped on rollback). Timeline events and messages are noticed wherever they are inserted
 * (a TypeORM subscriber, or `rowsAdded` for raw inserts), run rows where they are written
 * (`runChanged`).
 */
@Injectable()
export class RunChanges implements EntitySubscriberInterface {
  private readonly logger = new Logger('RunChanges');
  private readonly deferred = new WeakMap<QueryRunner, Map<string, Set<ChangeKind>>>();

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly connections: RedisConnections,
  ) {
    dataSource.subscribers.push(this);
  }

  get channel(): string {
    return runChangesChannel(this.connections.prefix);
  }

  /** The run's row changed through `manager` (its transaction's, or autocommit when omitted). */
  runChanged(runId: string, manager?: EntityManager): void {
    this.changed(manager?.queryRunner, runId, 'run');
  }

  /** Rows were added to the run's timeline or conversation outside a transaction (committed). */
  rowsAdded(runId: string, kind: 'timeline' | 'message'): void {
    this.publish({ runId, kinds: [kind] });
  }

  /** Rows were added by raw SQL through `manager` (its transaction's: hinted after the commit). */
  rowsAddedIn(manager: EntityManager, runId: string, kind: 'timeline' | 'message'): void {
    this.changed(manager.queryRunner, runId, kind);
  }

  afterInsert(event: InsertEvent<unknown>): void {
    const target = event.metadata.target;
    const kind = KIND_OF_INSERT.get(target);
    const row = event.entity as { runId?: unknown; eventType?: unknown } | undefined;
    // A run's first event commits with the run itself: no stream can be open on it yet.
    if (!kind || typeof row?.runId !== 'string' || row.eventType === RUN_CREATED_EVENT) return;
    this.changed(event.queryRunner, row.runId, kind);
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    if (event.queryRunner.isTransactionActive) return; // a savepoint: the outer commit decides
    const pending = this.deferred.get(event.queryRunner);
    this.deferred.delete(event.queryRunner);
    for (const [runId, kinds] of pending ?? []) this.publish({ runId, kinds: [...kinds] });
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) this.deferred.delete(event.queryRunner);
  }

  private changed(queryRunner: QueryRunner | undefined, runId: string, kind: ChangeKind): void {
    if (!queryRunner?.isTransactionActive) return this.publish({ runId, kinds: [kind] });
    const pending = this.deferred.get(queryRunner) ?? new Map<string, Set<ChangeKind>>();
    this.deferred.set(queryRunner, pending);
    pending.set(runId, (pending.get(runId) ?? new Set()).add(kind));
  }

  private publish(change: RunChange): void {
    this.redis.publish(this.channel, encodeRunChange(change)).catch((err: Error) => {
      // Streams catch up on the run's next change, or when their client reconnects.
      this.logger.warn(`run change of ${change.runId} not published (${err.message})`);
    });
  }
}
