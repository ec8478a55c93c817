import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { ScheduleFirings } from './schedule-firings.service';

const TIMER = 'schedules.tick';

/**
 * The `scheduler` role: every `schedules.tickIntervalMs` it claims due ticks, creates their
 * runs and finishes firings a dead scheduler left behind. Any number of replicas may run it.
 */
@Injectable()
export class SchedulerLoop implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Scheduler');
  private current: Promise<void> | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly firings: ScheduleFirings,
    private readonly registry: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    const timer = setInterval(() => void this.tick(), this.config.schedules.tickIntervalMs);
    this.registry.addInterval(TIMER, timer);
  }

  /** Stops ticking and lets a tick in progress finish before the database pool closes. */
  async onModuleDestroy(): Promise<void> {
    if (this.registry.doesExist('interval', TIMER)) this.registry.deleteInterval(TIMER);
    await this.current;
  }

  tick(): Promise<void> {
    this.current ??= this.runOnce().finally(() => {
      this.current = null;
    });
    return this.current;
  }

  private async runOnce(): Promise<void> {
    try {
      // A full batch means more schedules may be due: claim again before waiting for the timer.
      for (let more = true; more;) {
        const claimed = await this.firings.claimDue();
        for (const firingId of claimed.firingIds) await this.spawn(firingId);
        more = claimed.full;
      }
      await this.firings.spawnStale();
    } catch (err) {
      this.logger.warn(`tick failed: ${(err as Error).message}`);
    }
  }

  /** A failure here leaves the firing pending; the sweep of a later tick retries it. */
  private async spawn(firingId: string): Promise<void> {
    try {
      await this.firings.spawn(firingId);
    } catch (err) {
      this.logger.warn(`firing ${firingId}: ${(err as Error).message}; will retry`);
    }
  }
}
