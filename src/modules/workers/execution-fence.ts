import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AmbientMetrics } from '../metrics';
import type { JsonObject } from '../../common/json';
import { AppendedEvent, RowCondition, RunAppends, RunLeaseRepository } from '../runs';

/**
 * What an execution proves it still holds its run with: the run's `execution_count` it claimed
 * and the `lease_owner` it claimed it as (a worker id, or `key:<id>` for a self-hosted worker).
 * A takeover (the sweeper's requeue and a new claim), a cancel or the run's end changes one of
 * them, so a stale execution's token no longer matches.
 */
export interface ExecutionToken {
  runId: string;
  executionId: number;
  holder: ExecutionHolder;
  /** Called once when a write is refused, before the error is thrown (aborts the execution). */
  onStale?: () => void;
}

/**
 * - `lease`: the run's `lease_owner` (a worker id, or `key:<id>` for a self-hosted worker);
 * - `run-key`: a command's run-scoped key on Ambient's own workers, acting for whichever worker
 *   holds execution `executionId` (never a self-hosted worker's `key:` lease);
 * - `debug-agent`: a debug agent in the kept workspace of a FAILED run; a continuation that
 *   claims the run makes it stale.
 */
export type ExecutionHolder = { lease: string } | 'run-key' | 'debug-agent';

/** A write of an execution that no longer holds its run; it changed nothing. */
export class StaleExecutionError extends Error {
  constructor(
    readonly token: ExecutionToken,
    readonly write: string,
  ) {
    super(
      `execution ${token.executionId} of run ${token.runId} no longer holds the run: its ${write} write was refused`,
    );
    this.name = 'StaleExecutionError';
  }
}

/**
 * FIELD(), not IN: every statement the token guards names the run by its id, and must reach the
 * row by its primary key alone (a plan through a state index locks index gaps there, which
 * deadlocked with state changes of the same run; see RunTransitions).
 */
const RUNNING = "FIELD(state, 'CLAIMED', 'INPROGRESS') > 0";

/** The token as SQL over the `runs` row (positional parameters). */
function tokenCondition(token: ExecutionToken): RowCondition {
  const { holder } = token;
  if (holder === 'debug-agent') {
    return {
      sql: "execution_count = ? AND lease_owner IS NULL AND state = 'FAILED'",
      params: [token.executionId],
    };
  }
  if (holder === 'run-key') {
    return {
      sql: `execution_count = ? AND lease_owner NOT LIKE 'key:%' AND ${RUNNING}`,
      params: [token.executionId],
    };
  }
  return {
    sql: `execution_count = ? AND lease_owner = ? AND ${RUNNING}`,
    params: [token.executionId, holder.lease],
  };
}

/**
 * Fencing of executions: every write an execution makes to its run (messages, timeline events,
 * artifacts, follow-up consumption, usage, state) happens in a transaction that first locks the
 * run row for share and checks the token, or in a guarded UPDATE that includes it. A takeover
 * needs the row exclusively, so a write either commits before it or sees it and is refused.
 */
@Injectable()
export class ExecutionFence {
  private readonly logger = new Logger('ExecutionFence');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly metrics: AmbientMetrics,
    private readonly records: RunLeaseRepository,
    private readonly appends: RunAppends,
  ) {}

  /** Runs `work` in a transaction where the token is checked current and stays so until commit. */
  async write<T>(
    token: ExecutionToken,
    write: string,
    work: (manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      if (!(await this.holds(manager, token, true))) this.refuse(token, write);
      return work(manager);
    });
  }

  /** Adds conversation messages in one fenced statement (see RunAppends); refused when stale. */
  async appendMessages(token: ExecutionToken, messages: JsonObject[]): Promise<void> {
    const { runId, executionId } = token;
    const added = await this.appends.messages(runId, executionId, tokenCondition(token), messages);
    if (!added) this.refuse(token, 'message');
  }

  /** Adds timeline events in one fenced statement (see RunAppends); refused when stale. */
  async appendEvents(token: ExecutionToken, events: AppendedEvent[]): Promise<void> {
    const { runId, executionId } = token;
    const added = await this.appends.events(runId, executionId, tokenCondition(token), events);
    if (!added) this.refuse(token, 'event');
  }

  /**
   * Throws unless the token is current now: for writes outside MySQL (blobs, the workspace on
   * disk) that cannot share the run row's lock; the MySQL writes around them are fenced.
   */
  async check(
    token: ExecutionToken,
    write: string,
    /** Also pass when the run was cancelled at this execution (what it recorded stays its own). */
    options: { orCancelledHere?: boolean } = {},
  ): Promise<void> {
    const held = await this.holds(this.dataSource.manager, token, false, options.orCancelledHere);
    if (!held) this.refuse(token, write);
  }

  /** A lease holder's token as an extra `RunTransitions` guard (the UPDATE is the check). */
  static transitionGuard(token: ExecutionToken & { holder: { lease: string } }): {
    sql: string;
    params: Record<string, unknown>;
  } {
    return {
      sql: 'execution_count = :fencedExecution AND lease_owner = :fencedOwner',
      params: { fencedExecution: token.executionId, fencedOwner: token.holder.lease },
    };
  }

  /** Logs and counts a refused write, aborts the execution, and throws. */
  refuse(token: ExecutionToken, write: string): never {
    throw this.refused(token, write);
  }

  /** Logs and counts a refused write and aborts the execution; the error is the caller's. */
  refused(token: ExecutionToken, write: string): StaleExecutionError {
    const error = new StaleExecutionError(token, write);
    this.metrics.staleExecutionWrite(write);
    this.logger.warn(`stale execution: ${error.message}`);
    token.onStale?.();
    return error;
  }

  private async holds(
    manager: EntityManager,
    token: ExecutionToken,
    lock: boolean,
    orCancelledHere = false,
  ): Promise<boolean> {
    const { sql, params } = tokenCondition(token);
    const condition = orCancelledHere
      ? {
          sql: `((${sql}) OR (execution_count = ? AND state = 'CANCELLED'))`,
          params: [...params, token.executionId],
        }
      : { sql, params };
    return this.records.matches(manager, token.runId, condition, lock);
  }
}
