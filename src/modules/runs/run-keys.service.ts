import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { newUid } from '../../common/ids';
import { ApiKeysService } from '../teams';
import type { Principal } from '../../common/auth/principal';
import { Run } from './entities/run.entity';
import { RunLeaseRepository } from './run-lease.repository';
import { RunLookupRepository } from './run-lookup.repository';
import { isTerminal } from './run-state';

const STALE_BATCH = 500;

/** How long a revoked run-scoped key stays in `api_keys` (for an operator's look) before it goes. */
export const REVOKED_RUN_KEY_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Run-scoped keys: an execution that runs outside Ambient's own workers (a self-hosted worker)
 * gets a key bound to its run and execution, and reports through the `@RunScoped()` routes with
 * it. The key is also the execution's lease: the run's `lease_owner` is `key:<key id>` while the
 * execution holds the run, so a cancelled, recovered or finished execution loses its rights at
 * once, whatever replica served the change. Keys are revoked when their execution ends.
 */
@Injectable()
export class RunKeysService {
  constructor(
    private readonly lookups: RunLookupRepository,
    private readonly leases: RunLeaseRepository,
    private readonly apiKeys: ApiKeysService,
  ) {}

  /** A fresh key id and the lease owner an execution holding that key writes on its run. */
  static newLease(): { keyId: string; leaseOwner: string } {
    const keyId = newUid();
    return { keyId, leaseOwner: RunKeysService.leaseOwnerFor(keyId) };
  }

  static leaseOwnerFor(keyId: string): string {
    return `key:${keyId}`;
  }

  /** The key id of a lease owner written by `newLease`, or null for other owners. */
  static keyIdOf(leaseOwner: string | null): string | null {
    return leaseOwner?.startsWith('key:') ? leaseOwner.slice(4) : null;
  }

  /**
   * Issues the key of one execution (the caller has already written its lease owner on the run).
   * The key acts as the run's executor, or its creator when it has none.
   */
  async issue(
    run: Pick<Run, 'id' | 'teamId' | 'executorId' | 'creatorId'>,
    executionId: number,
    keyId: string,
    /** A self-hosted worker's key: the credential its connection was made with. */
    workerCredentialId?: string,
  ): Promise<string> {
    const userId = run.executorId ?? run.creatorId;
    if (!userId) throw new Error(`run ${run.id} has no executor or creator to act as`);
    return this.apiKeys.createForRun({
      id: keyId,
      teamId: run.teamId,
      userId,
      runId: run.id,
      executionId,
      ...(workerCredentialId ? { workerCredentialId } : {}),
    });
  }

  /**
   * True while the key's execution runs on Ambient's own workers (their lease owner is a worker,
   * not a key): the key of the run's current, unfinished execution stays valid.
   */
  static isServiceExecutionKey(
    run: Pick<Run, 'state' | 'leaseOwner' | 'executionCount'>,
    keyExecutionId: number | null | undefined,
  ): boolean {
    return (
      (run.state === 'CLAIMED' || run.state === 'INPROGRESS') &&
      run.leaseOwner !== null &&
      RunKeysService.keyIdOf(run.leaseOwner) === null &&
      run.executionCount === keyExecutionId
    );
  }

  async revoke(keyId: string): Promise<void> {
    await this.apiKeys.revokeMany([keyId]);
  }

  /**
   * The run a run-scoped caller reports for, and whether its execution still holds it. Throws
   * 403 when the execution no longer holds the run and `allowEnded` does not cover the case.
   */
  async resolve(
    principal: Principal,
    allowEnded: 'cancelled' | false = false,
  ): Promise<{ run: Run; holdsLease: boolean }> {
    const run = principal.runId ? await this.lookups.find(principal.runId) : null;
    if (!run) throw new ApiError('not_authorized', 'the run of this key no longer exists');
    const holdsLease = run.leaseOwner === RunKeysService.leaseOwnerFor(principal.keyId);
    const endedByCancel =
      run.state === 'CANCELLED' && run.executionCount === principal.runExecutionId;
    if (!holdsLease && !(allowEnded === 'cancelled' && endedByCancel)) {
      throw new ApiError(
        'not_authorized',
        `this key's execution no longer holds run ${run.id} (the run is ${run.state}); stop working on it`,
      );
    }
    return { run, holdsLease };
  }

  /**
   * Deletes run-scoped keys revoked more than `retentionMs` ago, a batch per call: every
   * execution makes one, so without this `api_keys` would grow by a row per execution forever.
   */
  deleteRevoked(retentionMs: number): Promise<number> {
    return this.apiKeys.deleteRevokedRunKeys(new Date(Date.now() - retentionMs), STALE_BATCH);
  }

  /**
   * Revokes the keys whose execution lost its run without saying so (cancelled, recovered after a
   * crash, continued elsewhere). A key of a cancelled run keeps `graceMs` to report its usage.
   */
  async revokeStale(graceMs: number): Promise<number> {
    const keys = await this.apiKeys.liveRunKeys(STALE_BATCH);
    if (keys.length === 0) return 0;
    const runs = await this.leases.leasesOf([...new Set(keys.map((k) => k.runId!))]);
    const byId = new Map(runs.map((r) => [r.id, r]));
    const cutoff = Date.now() - graceMs;
    const stale = keys.filter((key) => {
      const run = byId.get(key.runId!);
      if (!run) return true;
      if (run.leaseOwner === RunKeysService.leaseOwnerFor(key.id)) return false;
      if (RunKeysService.isServiceExecutionKey(run, key.runExecutionId)) return false;
      return !isTerminal(run.state) || (run.finishedAt?.getTime() ?? 0) < cutoff;
    });
    await this.apiKeys.revokeMany(stale.map((k) => k.id));
    return stale.length;
  }
}
