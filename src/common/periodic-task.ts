import type { Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';

export interface PeriodicTaskOptions {
  /** Also the name of the interval in Nest's SchedulerRegistry. */
  name: string;
  intervalMs: number;
  work: () => Promise<unknown>;
  logger: Logger;
  registry: SchedulerRegistry;
  /** Also run once as the app starts, not only after the first interval. */
  runAtStart?: boolean;
  /**
   * A run not settled after this long is logged and left behind: the next tick starts anew (a
   * call to Redis or MySQL that never answers would otherwise stop the task for good). At most
   * one run is left behind at a time (while it is, a run that hangs too is joined as before), and
   * stopping waits for it too. Only for work that tolerates a late run beside a new one.
   */
  hungAfterMs?: number;
}

/**
 * Background work on a timer, as every sweeper needs it: never two runs at once (a tick that
 * finds one running joins it; see hungAfterMs for the one exception), a failure is logged and the
 * next tick tries again, and stopping waits for the run in progress so it never outlives the
 * database pool.
 */
export class PeriodicTask {
  private current: Promise<void> | null = null;
  /** A run left behind (hungAfterMs), until it settles. */
  private leftBehind: Promise<void> | null = null;

  constructor(private readonly options: PeriodicTaskOptions) {}

  start(): void {
    const { name, intervalMs, registry } = this.options;
    registry.addInterval(
      name,
      setInterval(() => void this.runNow(), intervalMs),
    );
    if (this.options.runAtStart) void this.runNow();
  }

  /** Runs the work now, or returns the run already in progress. */
  runNow(): Promise<void> {
    this.current ??= this.runOnce();
    return this.current;
  }

  private runOnce(): Promise<void> {
    const { name, logger, hungAfterMs } = this.options;
    const run = this.options.work().then(
      () => undefined,
      (err: Error) => logger.warn(`${name} failed: ${err.message}`),
    );
    let timer: NodeJS.Timeout | undefined;
    const hung =
      hungAfterMs === undefined || this.leftBehind
        ? null
        : new Promise<void>((resolve) => {
            timer = setTimeout(() => {
              logger.error(`${name} has not finished after ${hungAfterMs} ms: left behind`);
              const late: Promise<void> = run.finally(() => {
                if (this.leftBehind === late) this.leftBehind = null;
              });
              this.leftBehind = late;
              resolve();
            }, hungAfterMs);
            timer.unref();
          });
    const current: Promise<void> = (hung ? Promise.race([run, hung]) : run).finally(() => {
      clearTimeout(timer);
      if (this.current === current) this.current = null;
    });
    return current;
  }

  async stop(): Promise<void> {
    const { name, registry } = this.options;
    if (registry.doesExist('interval', name)) registry.deleteInterval(name);
    await Promise.all([this.current, this.leftBehind]);
  }
}

/** A provider whose work is a set of periodic tasks, started with the app and stopped with it. */
export abstract class PeriodicWorker implements OnApplicationBootstrap, OnModuleDestroy {
  protected abstract readonly tasks: PeriodicTask[];

  onApplicationBootstrap(): void {
    for (const task of this.tasks) task.start();
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.tasks.map((task) => task.stop()));
  }
}

/**
 * A worker whose one task is a sweep: run as the app starts and every interval, logged with
 * `swept(count)` when it did something, and runnable on demand (`sweepNow`, e.g. from a spec).
 */
export abstract class PeriodicSweeper extends PeriodicWorker {
  protected readonly tasks: PeriodicTask[];
  private readonly task: PeriodicTask;

  protected constructor(
    options: Omit<PeriodicTaskOptions, 'work' | 'runAtStart'> & {
      swept: (count: number) => string;
    },
  ) {
    super();
    const { swept, ...task } = options;
    this.task = new PeriodicTask({
      ...task,
      runAtStart: true,
      work: async () => {
        const count = await this.sweep();
        if (count) options.logger.log(swept(count));
      },
    });
    this.tasks = [this.task];
  }

  /** One sweep; returns how many things it swept. */
  abstract sweep(): Promise<number>;

  /** Sweeps now (or joins the sweep in progress). */
  sweepNow(): Promise<void> {
    return this.task.runNow();
  }
}
