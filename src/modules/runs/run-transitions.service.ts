import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { JsonObject } from '../../common/json';
import { Run } from './entities/run.entity';
import { AmbientMetrics } from '../metrics';
import { RunChanges } from './live/run-changes.service';
import {
  canTransition,
  ENDED_STATES,
  EVENT_FOR_STATE,
  isTerminal,
  RunState,
  statesLeadingTo,
} from './run-state';
import { isLoggedTransition, LoggedRun, runLogLine } from './run-log-lines';
import { RUN_CREATED_EVENT } from './new-run-writer.service';
import { RunEventRepository, TimelineEvent } from './run-event.repository';
import { RunFollowupRepository } from './run-followup.repository';
import { RunTransitionRepository } from './run-transition.repository';
import { RunUsageRepository } from './run-usage.repository';

/** Whether moving into `to` from one of `allowed` may take a run out of a running state. */
function leavesSlot(to: RunState, allowed: readonly RunState[]): boolean {
  const running = allowed.includes('CLAIMED') || allowed.includes('INPROGRESS');
  return running && (to === 'QUEUED' || isTerminal(to));
}

/**
 * The columns of `run_time` a transition writes: a claim starts the execution's clock; leaving
 * CLAIMED/INPROGRESS adds the execution's time to `run_time_ms` and stops the clock. The sum is
 * written before the clock is cleared (MariaDB assigns left to right), and only a running run has
 * a clock, so the SQL needs no state test. `:clockAt` is the transition's time (an UPDATE parameter).
 */
function executionClock(to: RunState, allowed: readonly RunState[], now: Date): Clock {
  if (to === 'CLAIMED') return { executionStartedAt: now };
  if (!leavesSlot(to, allowed)) return {};
  return {
    runTimeMs: () =>
      'run_time_ms + COALESCE(TIMESTAMPDIFF(MICROSECOND, execution_started_at, :clockAt) DIV 1000, 0)',
    executionStartedAt: null,
  };
}

type Clock = Partial<Record<keyof Run, ColumnValue>>;

/** Told about a run that left a slot, in its transaction; `teamId` when the transition knows it. */
type SlotListener = (runId: string, manager: EntityManager, teamId: string | null) => void;

/**
 * Told, in the transition's transaction, about a run that entered an end state: what must commit
 * with the end (a notification's outbox row) or not at all. Keep it short: the run row is locked.
 */
export type EndListener = (
  run: { id: string; teamId: string; state: RunState },
  manager: EntityManager,
) => Promise<void>;

/** Timeline event listing the follow-ups a cancel dropped (not delivered). */
export const FOLLOWUPS_DROPPED = 'followups_dropped';

type ColumnValue = unknown | (() => string);

/** Timeline event payload of a state entered; `false` records no event. */
type StateEvent = { payload?: Record<string, unknown>; executionId?: number | null } | false;

/** A state a transition enters, the states it leaves, and the event it records there. */
interface Hop {
  to: RunState;
  allowed: RunState[];
  event?: StateEvent;
}

export interface TransitionOptions {
  /** Narrows the states the run may be in; always intersected with the state machine's table. */
  from?: readonly RunState[];
  /** Other columns to write in the same UPDATE (entity property names). */
  set?: Partial<Record<keyof Run, ColumnValue>>;
  /** An extra guard, e.g. `lease_owner = :owner`. */
  where?: { sql: string; params: Record<string, unknown> };
  /** Timeline event payload; `false` records no event. */
  event?: StateEvent;
  /**
   * A state the run passes through on its way to `to`, in the same UPDATE (a claim's CLAIMED on
   * its way to INPROGRESS): `from` narrows the states leading to `via.state`, and both states'
   * events are recorded, in order, in one INSERT. Two round trips fewer than two transitions.
   */
  via?: { state: RunState; event?: StateEvent };
  /**
   * The run as it is once moved (but its `updated_at`, the transition's own time), when the caller
   * knows it: a start's or end's log line and metrics are made from it instead of a read back.
   */
  moved?: Omit<LoggedRun, 'updatedAt'>;
}

/**
 * The one way a run changes state: a guarded UPDATE (`WHERE state IN (allowed)`) and its
 * timeline event in one transaction (the caller's, when it passes its manager). Returns false when
 * the guard did not match, i.e. someone else moved the run first; callers decide what that means.
 * Entering CANCELLED also drops the run's undelivered follow-ups in that transaction, so no
 * execution can take them afterwards (cancel is final).
 */
@Injectable()
export class RunTransitions {
  private readonly logger = new Logger('Runs');
  private readonly slotListeners: SlotListener[] = [];
  private readonly endListeners: EndListener[] = [];

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly runs: RunTransitionRepository,
    private readonly events: RunEventRepository,
    private readonly followups: RunFollowupRepository,
    private readonly usage: RunUsageRepository,
    private readonly changes: RunChanges,
    private readonly metrics: AmbientMetrics,
  ) {}

  /**
   * Called, in the transition's transaction, for every applied transition that may have taken a
   * run out of CLAIMED/INPROGRESS (i.e. freed a concurrency slot): RunCapacity's wake-up.
   */
  onSlotReleased(listener: SlotListener): void {
    this.slotListeners.push(listener);
  }

  /** Called, in the transition's transaction, for every applied transition into an end state. */
  onEnded(listener: EndListener): void {
    this.endListeners.push(listener);
  }

  async transition(
    runId: string,
    to: RunState,
    options: TransitionOptions = {},
    inTransaction?: EntityManager,
  ): Promise<boolean> {
    const via = options.via?.state;
    if (via && !canTransition(via, to)) throw new Error(`no transition from ${via} to ${to}`);
    const allowed = statesLeadingTo(via ?? to).filter(
      (s) => !options.from || options.from.includes(s),
    );
    if (allowed.length === 0) return false;
    const hops: Hop[] = via
      ? [
          { to: via, allowed, event: options.via?.event },
          { to, allowed: [via], event: options.event },
        ]
      : [{ to, allowed, event: options.event }];
    let moved: LoggedRun | null = null;
    const run = async (manager: EntityManager) => {
      const appliedAt = await this.apply(manager, runId, hops, options);
      if (appliedAt && isLoggedTransition(to)) {
        moved = options.moved
          ? { ...options.moved, updatedAt: appliedAt }
          : await this.runs.movedRun(manager, runId);
      }
      const ended = moved as LoggedRun | null;
      if (ended && isTerminal(to)) {
        for (const listener of this.endListeners) {
          await listener({ id: runId, teamId: ended.teamId, state: to }, manager);
        }
      }
      if (appliedAt && hops.some((hop) => leavesSlot(hop.to, hop.allowed))) {
        const teamId = (moved as LoggedRun | null)?.teamId ?? null;
        for (const listener of this.slotListeners) listener(runId, manager, teamId);
      }
      return appliedAt !== null;
    };
    const applied = await (inTransaction ? run(inTransaction) : this.dataSource.transaction(run));
    const done = moved as LoggedRun | null;
    if (done) {
      if (isTerminal(to)) this.metrics.runEnded(to, done.createdAt, done.startedAt, done.updatedAt);
      const line = runLogLine(to, done);
      if (line) this.logger.log(line);
    }
    return applied;
  }

  /**
   * The transition's time once applied; null when the guard did not match. `hops` are the states
   * entered in order (one, or the `via` state and then `to`), each with the states it leaves.
   */
  private async apply(
    manager: EntityManager,
    runId: string,
    hops: Hop[],
    options: TransitionOptions,
  ): Promise<Date | null> {
    const now = new Date();
    const to = hops[hops.length - 1].to;
    const set: Clock = {
      ...hops.reduce<Clock>(
        (set, hop) => ({ ...set, ...executionClock(hop.to, hop.allowed, now) }),
        {},
      ),
      ...(options.set ?? {}),
      state: to,
      updatedAt: now,
    };
    // Every end has its time (the content retention counts from it), unless the caller set one.
    if (ENDED_STATES.includes(to) && !('finishedAt' in set)) set.finishedAt = now;
    const allowed = hops[0].allowed;
    if (!(await this.runs.move(manager, runId, allowed, set, now, options.where))) return null;
    this.changes.runChanged(runId, manager);
    const events: TimelineEvent[] = [];
    for (const { to: entered, event } of hops) {
      const eventType = EVENT_FOR_STATE[entered];
      if (!eventType || event === false) continue;
      events.push({
        eventType,
        occurredAt: now,
        executionId: event?.executionId ?? null,
        payload: event?.payload ?? null,
      });
    }
    await this.appendEvents(manager, runId, events);
    if (to === 'CANCELLED') await this.dropUndeliveredFollowups(manager, runId, now);
    return now;
  }

  /**
   * Follow-ups no execution took yet are recorded as not delivered. Locking reads see every
   * committed follow-up: one submitted concurrently committed before this UPDATE (it held the run
   * row) or it sees CANCELLED and is refused.
   */
  private async dropUndeliveredFollowups(
    manager: EntityManager,
    runId: string,
    now: Date,
  ): Promise<void> {
    const ids = await this.followups.dropUndelivered(manager, runId, now);
    if (ids.length === 0) return;
    await this.appendEvent(manager, runId, FOLLOWUPS_DROPPED, {
      occurredAt: now,
      payload: { followup_ids: ids, reason: 'the run was cancelled before an execution took them' },
    });
  }

  /**
   * Stores what a cancelled execution cost, outside any state change: only while the run is
   * CANCELLED at that execution (fenced: a run continued or taken over since is not touched).
   */
  async recordCancelledUsage(
    execution: { runId: string; executionId: number },
    usage: Run['requestUsage'],
  ): Promise<boolean> {
    if (!(await this.usage.recordCancelledUsage(execution, usage))) return false;
    this.changes.runChanged(execution.runId);
    return true;
  }

  /** Adds an event to the run's timeline (its change hint goes out after `manager`'s commit). */
  async appendEvent(
    manager: EntityManager,
    runId: string,
    eventType: string,
    fields: {
      occurredAt?: Date;
      executionId?: number | null;
      payload?: JsonObject | null;
    } = {},
  ): Promise<void> {
    await this.appendEvents(manager, runId, [{ eventType, ...fields }]);
  }

  private async appendEvents(
    manager: EntityManager,
    runId: string,
    events: TimelineEvent[],
  ): Promise<void> {
    if (events.length === 0) return;
    await this.events.append(manager, runId, events);
    // A run's first event commits with the run itself: no stream can be open on it yet.
    if (events.some((event) => event.eventType !== RUN_CREATED_EVENT)) {
      this.changes.rowsAddedIn(manager, runId, 'timeline');
    }
  }
}
