import { Injectable } from '@nestjs/common';
import type { Run } from '../runs';
import { RunTransitions } from '../runs';
import type { RequestUsage, StatusMessage } from '../run-config';
import { ExecutionFence } from './execution-fence';
import type { LeaseToken } from './execution-lease';

/** How an execution ends its run. */
export interface RunEnd {
  state: 'SUCCEEDED' | 'FAILED' | 'ERROR' | 'CANCELLED';
  statusMessage: StatusMessage;
  /** The run's usage with the execution's added; unset: the run's stays as it is. */
  requestUsage?: RequestUsage;
  /** More columns written with the end (the kept workspace's deadline). */
  alsoSet?: Partial<Record<keyof Run, unknown>>;
  /** The run as it is once ended, when the caller knows it: logged and measured without a read. */
  moved?: Run;
}

/**
 * The one way an execution ends its run, whether it ran on Ambient's workers or on a self-hosted
 * worker (RunExecutor's outcomes, the run-scoped API, a worker's end signal).
 */
@Injectable()
export class ExecutionEnds {
  constructor(private readonly transitions: RunTransitions) {}

  /**
   * One UPDATE out of CLAIMED or INPROGRESS, fenced by the execution's token (its execution and
   * lease), that writes the end state, status message, usage and finish time and drops the lease;
   * the end's timeline event and what must commit with an end (a notification's outbox row, see
   * RunTransitions.onEnded) go in its transaction. False when the token no longer holds the run:
   * nothing was written.
   */
  end(run: Pick<Run, 'id'>, token: LeaseToken, end: RunEnd): Promise<boolean> {
    const { statusMessage, requestUsage } = end;
    return this.transitions.transition(run.id, end.state, {
      from: ['CLAIMED', 'INPROGRESS'],
      set: {
        finishedAt: new Date(),
        statusMessage,
        leaseOwner: null,
        leaseExpiresAt: null,
        ...(requestUsage ? { requestUsage } : {}),
        ...end.alsoSet,
      },
      where: ExecutionFence.transitionGuard(token),
      event: { executionId: token.executionId, payload: { ...statusMessage } },
      ...(end.moved ? { moved: end.moved } : {}),
    });
  }
}
