import { newTestService } from '../../../test/support/unit/new-test-service';
import { APP_CONFIG } from '../../config/app-config';
import { RunFollowupsService } from '../runs';
import { ExecutionContextFactory } from './execution-context.factory';
import { ExecutionFence, type ExecutionToken } from './execution-fence';

/**
 * What an execution's harness calls between turns and while commands run: follow-ups are read
 * only when the watch says they may be there, and timeline events keep their order whoever
 * emits them (a held command's and the sandbox's egress refusals alike).
 */
describe('ExecutionContextFactory', () => {
  async function factory() {
    const built = await newTestService(ExecutionContextFactory, [
      { provide: APP_CONFIG, useValue: {} },
    ]);
    const followups = built.fakeOf(RunFollowupsService);
    const fence = built.fakeOf(ExecutionFence);
    fence.appendEvents.mockResolvedValue(undefined);
    fence.write.mockResolvedValue(['also say hi']);
    return { contexts: built.sut, followups, fence };
  }
  const token = () => ({ runId: 'run-1', executionId: 1 }) as ExecutionToken;

  it('reads no follow-ups when the watch says none were announced, and takes them when it does', async () => {
    const { contexts, followups } = await factory();
    followups.hasUndelivered.mockResolvedValue(true);
    const quiet = jest.fn(() => false);
    expect(await contexts.takeFollowups(token(), quiet)).toEqual([]);
    expect(quiet).toHaveBeenCalled();
    expect(followups.hasUndelivered).not.toHaveBeenCalled();

    expect(await contexts.takeFollowups(token(), () => true)).toEqual(['also say hi']);
    expect(followups.hasUndelivered).toHaveBeenCalledWith('run-1');
  });

  it("holds an execution's events together, whoever emits them, and writes them in order", async () => {
    const { contexts, fence } = await factory();
    const execution = token();
    const release = contexts.holdEvents(execution);
    await contexts.emitEvent(execution, 'command_started', { command_id: 'c' });
    await contexts.emitEvent(execution, 'egress_denied', { host: 'blocked.example' });
    // Another execution's events are not held by this one's command.
    await contexts.emitEvent(token(), 'secrets_skipped', null);
    expect(fence.appendEvents).toHaveBeenCalledTimes(1);
    await contexts.emitEvent(execution, 'command_finished', { command_id: 'c' });
    await release();
    expect(fence.appendEvents).toHaveBeenCalledTimes(2);
    const [written, events] = fence.appendEvents.mock.calls[1];
    expect(written).toBe(execution);
    expect(events.map((e) => [e.eventType, e.payload])).toEqual([
      ['command_started', { command_id: 'c' }],
      ['egress_denied', { host: 'blocked.example' }],
      ['command_finished', { command_id: 'c' }],
    ]);
    expect(events.every((e) => e.occurredAt instanceof Date)).toBe(true);
  });
});
