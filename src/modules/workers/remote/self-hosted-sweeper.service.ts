import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PeriodicTask, PeriodicWorker } from '../../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { REVOKED_RUN_KEY_RETENTION_MS, RunKeysService, RunSignals } from '../../runs';
import { SelfHostedDispatcher } from './self-hosted-dispatcher.service';
import { SelfHostedRuns } from './self-hosted-runs.service';

/** How long the key of a cancelled execution may still report the execution's usage. */
const ENDED_KEY_GRACE_MS = 60_000;

/**
 * Housekeeping of self-hosted runs (api role, safe in every replica: each step is guarded):
 * unanswered offers go back to the queue, runs no worker claimed in time end in ERROR, keys of
 * executions that lost their run are revoked (and deleted a day after), and queued runs are offered again to this
 * replica's connections in case a hint was lost. Lapsed leases of claimed runs are recovered by
 * the worker role's RunSweeper, like every run's.
 */
@Injectable()
export class SelfHostedSweeper extends PeriodicWorker {
  private readonly logger = new Logger('SelfHostedWorkers');
  protected readonly tasks: PeriodicTask[];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly runs: SelfHostedRuns,
    private readonly runKeys: RunKeysService,
    private readonly dispatcher: SelfHostedDispatcher,
    private readonly signals: RunSignals,
    registry: SchedulerRegistry,
  ) {
    super();
    this.tasks = [
      new PeriodicTask({
        name: 'self-hosted sweep',
        intervalMs: config.runs.dispatchSweepIntervalMs,
        logger: this.logger,
        registry,
        work: () => this.sweepOnce(),
      }),
    ];
  }

  private async sweepOnce(): Promise<void> {
    for (const run of await this.runs.withdrawLapsedOffers()) {
      await this.signals.publishSelfHostedWork(run.teamId, run.workerHost!);
    }
    const failed = await this.runs.failUnclaimed();
    if (failed) this.logger.warn(`${failed} run(s) ended: no self-hosted worker claimed them`);
    await this.runKeys.revokeStale(ENDED_KEY_GRACE_MS);
    this.dispatcher.dropUnansweredOffers(this.config.runs.leaseMs);
    await this.dispatcher.dispatchAll();
    // Last, and on its own: housekeeping that fails (a lock wait) must not hold up dispatching.
    await this.runKeys.deleteRevoked(REVOKED_RUN_KEY_RETENTION_MS).catch((err: Error) => {
      this.logger.warn(`revoked run keys not deleted this time (${err.message})`);
    });
  }
}
