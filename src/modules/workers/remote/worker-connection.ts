import { WebSocket } from 'ws';
import { encodeMessage, ServerMessage } from './worker-protocol';

const SEND_TIMEOUT_MS = 10_000;

/** A run this connection was offered (claimed or not yet), with the lease its execution holds. */
export interface ConnectionTask {
  runId: string;
  executionId: number;
  leaseOwner: string;
  /** False until the worker answers the offer with `task_claimed`. */
  claimed: boolean;
  offeredAt: number;
}

/** One websocket of a self-hosted worker, as the replica holding it sees it. */
export class WorkerConnection {
  readonly connectedAt = new Date();
  lastSeenAt = new Date();
  /** Runs offered or claimed through this connection and not ended yet, by run id. */
  readonly tasks = new Map<string, ConnectionTask>();
  /** After a rejection the worker gets no offer until this time, or until a task of it ends. */
  private busyUntil = 0;

  constructor(
    readonly id: string,
    readonly teamId: string,
    readonly workerHost: string,
    /** The worker credential it registered with (its revocation closes the connection). */
    readonly credentialId: string,
    private readonly socket: WebSocket,
  ) {}

  /** The presence group and routing key: one team's worker host. */
  get group(): string {
    return groupKey(this.teamId, this.workerHost);
  }

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  /** An offer is out that the worker has neither claimed nor rejected yet. */
  get hasUnansweredOffer(): boolean {
    for (const task of this.tasks.values()) if (!task.claimed) return true;
    return false;
  }

  canTakeOffers(now = Date.now()): boolean {
    return this.open && now >= this.busyUntil;
  }

  markBusy(forMs: number): void {
    this.busyUntil = Date.now() + forMs;
  }

  markFree(): void {
    this.busyUntil = 0;
  }

  seen(): void {
    this.lastSeenAt = new Date();
  }

  /** Sends one message; false when the socket is gone or the write failed or stalled. */
  send(message: ServerMessage): Promise<boolean> {
    if (!this.open) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), SEND_TIMEOUT_MS);
      this.socket.send(encodeMessage(message), (err) => {
        clearTimeout(timer);
        resolve(!err);
      });
    });
  }

  close(code: number, reason: string): void {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    this.socket.close(code, reason);
    // A peer that does not answer the close handshake is cut off.
    setTimeout(() => this.socket.terminate(), 2000).unref();
  }

  terminate(): void {
    this.socket.terminate();
  }
}

export function groupKey(teamId: string, workerHost: string): string {
  return `${teamId}\u0000${workerHost}`;
}
