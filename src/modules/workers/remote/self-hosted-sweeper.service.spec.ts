import { Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { fake } from '../../../../test/support/unit/fake';
import type { AppConfig } from '../../../config/app-config';
import type { RunKeysService, RunSignals } from '../../runs';
import { SelfHostedDispatcher } from './self-hosted-dispatcher.service';
import { SelfHostedRuns } from './self-hosted-runs.service';
import { SelfHostedSweeper } from './self-hosted-sweeper.service';

/** The self-hosted sweep's housekeeping of run-scoped keys, its collaborators faked. */
describe('SelfHostedSweeper: revoked run keys', () => {
  const config = { runs: { dispatchSweepIntervalMs: 1000, leaseMs: 1000 } } as AppConfig;

  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'warn', 'error']));

  function sweeper() {
    const runs = fake<SelfHostedRuns>();
    runs.withdrawLapsedOffers.mockResolvedValue([]);
    runs.failUnclaimed.mockResolvedValue(0);
    const runKeys = fake<RunKeysService>();
    runKeys.revokeStale.mockResolvedValue(0);
    const dispatcher = fake<SelfHostedDispatcher>();
    dispatcher.dispatchAll.mockResolvedValue(undefined);
    const swept = new SelfHostedSweeper(
      config,
      runs,
      runKeys,
      dispatcher,
      fake<RunSignals>(),
      new SchedulerRegistry(),
    );
    const task = (swept as unknown as { tasks: { runNow(): Promise<void> }[] }).tasks[0];
    return { runKeys, dispatcher, sweep: () => task.runNow() };
  }

  it('deletes the keys revoked over a day ago at each sweep', async () => {
    const { runKeys, sweep } = sweeper();
    runKeys.deleteRevoked.mockResolvedValue(3);
    await sweep();
    expect(runKeys.deleteRevoked).toHaveBeenCalledWith(24 * 60 * 60 * 1000);
  });

  it('still dispatches queued runs when the deletion fails (a lock wait)', async () => {
    const { runKeys, dispatcher, sweep } = sweeper();
    runKeys.deleteRevoked.mockRejectedValue(new Error('Lock wait timeout exceeded'));
    await expect(sweep()).resolves.toBeUndefined();
    expect(dispatcher.dispatchAll).toHaveBeenCalledTimes(1);
  });
});
