import { Injectable, Logger } from '@nestjs/common';
import type { Run } from '../../runs';
import { RunSignals } from '../../runs';
import { withMaskedMcpServers } from '../../secrets';
import { Offer, SelfHostedRuns } from './self-hosted-runs.service';
import { groupKey, WorkerConnection } from './worker-connection';
import { RUN_KEY_ENV, TaskAssignment, WorkerMessage } from './worker-protocol';
import { WorkerCredentialsService } from './credentials/worker-credentials.service';

/** Runs looked at per dispatch round of one worker host. */
const OFFER_BATCH = 20;
/** A worker that rejected an offer gets none for this long, unless one of its tasks ends first. */
export const REJECT_BACKOFF_MS = 5000;

/**
 * Offers queued runs to the worker connections this replica holds and reacts to what workers
 * say. Each connection has at most one unanswered offer; runs go to the connection with the
 * fewest tasks. Work for a worker host is serialised per host on this replica; across replicas
 * the guarded transitions of SelfHostedRuns decide.
 */
@Injectable()
export class SelfHostedDispatcher {
  private readonly logger = new Logger('SelfHostedWorkers');
  private readonly groups = new Map<string, Set<WorkerConnection>>();
  private readonly dispatching = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();

  constructor(
    private readonly runs: SelfHostedRuns,
    private readonly signals: RunSignals,
    private readonly credentials: WorkerCredentialsService,
  ) {}

  get connections(): WorkerConnection[] {
    return [...this.groups.values()].flatMap((set) => [...set]);
  }

  add(conn: WorkerConnection): void {
    const set = this.groups.get(conn.group) ?? new Set<WorkerConnection>();
    set.add(conn);
    this.groups.set(conn.group, set);
  }

  /** A connection went away: its unanswered offers go back to the queue for someone else. */
  async remove(conn: WorkerConnection): Promise<void> {
    const set = this.groups.get(conn.group);
    set?.delete(conn);
    if (set?.size === 0) this.groups.delete(conn.group);
    let withdrawn = false;
    for (const task of conn.tasks.values()) {
      if (task.claimed) continue; // its execution keeps the lease while it reports
      withdrawn = (await this.runs.withdrawOffer(task.runId, task.leaseOwner)) || withdrawn;
    }
    conn.tasks.clear();
    if (withdrawn) await this.signals.publishSelfHostedWork(conn.teamId, conn.workerHost);
  }

  /** Offers the host's queued runs to its free connections here (no-op without connections). */
  dispatch(teamId: string, workerHost: string): Promise<void> {
    const key = groupKey(teamId, workerHost);
    if (!this.groups.has(key)) return Promise.resolve();
    const running = this.dispatching.get(key);
    if (running) {
      this.again.add(key);
      return running;
    }
    const round = (async () => {
      try {
        do {
          this.again.delete(key);
          await this.dispatchRound(teamId, workerHost, key);
        } while (this.again.has(key));
      } catch (err) {
        this.logger.warn(`dispatch to "${workerHost}" failed: ${(err as Error).message}`);
      } finally {
        this.dispatching.delete(key);
      }
    })();
    this.dispatching.set(key, round);
    return round;
  }

  async dispatchAll(): Promise<void> {
    const hosts = new Map(this.connections.map((c) => [c.group, c]));
    await Promise.all([...hosts.values()].map((c) => this.dispatch(c.teamId, c.workerHost)));
  }

  /** Sends `task_cancellation` to the connections that were given the run. */
  async cancel(runId: string): Promise<void> {
    for (const conn of this.connections) {
      if (!conn.tasks.has(runId)) continue;
      this.logger.log(`cancelling run ${runId} on worker "${conn.workerHost}" (${conn.id})`);
      await conn.send({ type: 'task_cancellation', data: { task_id: runId } });
    }
  }

  /** Forgets offers a worker never answered (the sweep has withdrawn them from the run). */
  dropUnansweredOffers(olderThanMs: number): void {
    const cutoff = Date.now() - olderThanMs;
    for (const conn of this.connections) {
      for (const [runId, task] of conn.tasks) {
        if (!task.claimed && task.offeredAt < cutoff) conn.tasks.delete(runId);
      }
    }
  }

  async handle(conn: WorkerConnection, message: WorkerMessage): Promise<void> {
    const runId = message.data.task_id;
    const task = conn.tasks.get(runId);
    if (!task) {
      this.logger.warn(`${message.type} from "${conn.workerHost}" for unknown task ${runId}`);
      return;
    }
    switch (message.type) {
      case 'task_claimed':
        if (await this.runs.claim(runId, task.leaseOwner)) {
          task.claimed = true;
        } else {
          // The offer was withdrawn meanwhile (it lapsed): the worker must not run it.
          conn.tasks.delete(runId);
          await conn.send({ type: 'task_cancellation', data: { task_id: runId } });
        }
        break;
      case 'task_rejected':
        conn.tasks.delete(runId);
        conn.markBusy(REJECT_BACKOFF_MS);
        this.logger.log(`"${conn.workerHost}" rejected run ${runId}: ${message.data.reason ?? ''}`);
        await this.runs.withdrawOffer(runId, task.leaseOwner);
        // Another connection of the host, maybe on another replica, may take it.
        await this.signals.publishSelfHostedWork(conn.teamId, conn.workerHost);
        break;
      case 'task_completed':
      case 'task_failed':
        conn.tasks.delete(runId);
        conn.markFree();
        await this.runs.applyWorkerReport(
          runId,
          task.leaseOwner,
          message.type === 'task_completed'
            ? {
                kind: 'completed',
                message: message.data.message,
                taskState: message.data.task_state,
              }
            : {
                kind: 'failed',
                message: message.data.message,
                failureCause: message.data.failure_cause,
                failureReason: message.data.failure_reason,
              },
        );
        break;
    }
    void this.dispatch(conn.teamId, conn.workerHost);
  }

  /**
   * Offers queued runs to free connections. A connection still holding an execution of a run
   * (the worker has not sent its end signal yet, e.g. a follow-up arrived as the run ended) is
   * not offered that run: the protocol names tasks by run id alone, so that execution's end
   * signal would be taken for the new offer's, and the worker would refuse a run it still runs.
   */
  private async dispatchRound(teamId: string, workerHost: string, key: string): Promise<void> {
    const free = () =>
      [...(this.groups.get(key) ?? [])].filter((c) => c.canTakeOffers() && !c.hasUnansweredOffer);
    if (free().length === 0) return;
    for (const run of await this.runs.queued(teamId, workerHost, OFFER_BATCH)) {
      const open = free();
      if (open.length === 0) return;
      const conn = open
        .filter((c) => !c.tasks.has(run.id))
        .sort((a, b) => a.tasks.size - b.tasks.size)[0];
      if (!conn) continue;
      const offer = await this.runs.offer(run, conn.credentialId);
      if (!offer) continue;
      // A revocation of the credential that committed while the offer's key waited on its lock
      // (WorkerCredentialsService.revoke) revoked every key but this one: withdrawn instead.
      if (!(await this.credentials.stillValid([conn.credentialId])).has(conn.credentialId)) {
        await this.runs.withdrawOffer(run.id, offer.leaseOwner);
        // No more offers to it: the gateway closes it (the revocation is announced to it).
        conn.markBusy(REJECT_BACKOFF_MS);
        continue;
      }
      await this.send(conn, run, offer);
    }
  }

  private async send(conn: WorkerConnection, run: Run, offer: Offer): Promise<void> {
    conn.tasks.set(run.id, {
      runId: run.id,
      executionId: offer.executionId,
      leaseOwner: offer.leaseOwner,
      claimed: false,
      offeredAt: Date.now(),
    });
    if (await conn.send({ type: 'task_assignment', data: assignmentFor(run, offer) })) return;
    conn.tasks.delete(run.id);
    await this.runs.withdrawOffer(run.id, offer.leaseOwner);
  }
}

/** The `task_assignment` of one execution; the run-scoped key travels in `env_vars`. */
export function assignmentFor(run: Run, offer: Offer): TaskAssignment {
  return {
    task_id: run.id,
    execution_id: String(offer.executionId),
    task: {
      id: run.id,
      title: run.title,
      task_definition: { prompt: run.prompt },
      created_at: run.createdAt.toISOString(),
      updated_at: run.updatedAt.toISOString(),
      // The worker gets the revealed MCP values from POST /harness-support/start, with its key.
      agent_config_snapshot: withMaskedMcpServers(run.config),
      agent_conversation_id: run.conversationId,
    },
    env_vars: { [RUN_KEY_ENV]: offer.key },
  };
}
