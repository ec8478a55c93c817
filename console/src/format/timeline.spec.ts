import { timelineSteps } from './timeline';

type Event = Parameters<typeof timelineSteps>[0][number];

let uuid = 0;
const event = (event_type: string, second: number, payload?: Record<string, unknown>): Event =>
  ({
    event_uuid: `e${uuid++}`,
    event_type,
    occurred_at: new Date(Date.UTC(2026, 0, 1, 12, 0, second)).toISOString(),
    run_id: 'r',
    ...(payload ? { payload } : {}),
  }) as Event;
const at = (second: number) => Date.UTC(2026, 0, 1, 12, 0, second);
const summary = (steps: ReturnType<typeof timelineSteps>['steps']) =>
  steps.map((step) => [step.event.event_type, step.durationMs, step.status]);

describe('timelineSteps', () => {
  it('makes steps that last until the next one, the last until the run ended', () => {
    const events = [
      event('oz_run_created', 0),
      event('agent_started', 2),
      event('oz_run_failed', 10),
    ];
    const finished = timelineSteps(events, new Date(at(10)).toISOString(), at(3600), false);
    expect(finished.totalMs).toBe(10_000);
    expect(summary(finished.steps)).toEqual([
      ['oz_run_created', 2_000, 'plain'],
      ['agent_started', 8_000, 'plain'],
      ['oz_run_failed', 0, 'failed'],
    ]);
    // Still running: the last step lasts until now.
    const running = timelineSteps(events.slice(0, 2), null, at(5), true);
    expect(running.steps.map((step) => step.durationMs)).toEqual([2_000, 3_000]);
    expect(timelineSteps([], null, at(0), false).steps).toEqual([]);
  });

  it('folds a command into one step from its start to its end, with its output in order', () => {
    const id = { command_id: 'c1' };
    const events = [
      event('agent_started', 0),
      event('command_started', 1, { ...id, command: 'npm test' }),
      event('command_output', 2, { ...id, seq: 1, text: 'two\n' }),
      event('command_output', 2, { ...id, seq: 0, text: 'one\n' }),
      event('command_finished', 4, { ...id, exit_code: 0, timed_out: false }),
      event('oz_run_done', 6),
    ];
    const { steps } = timelineSteps(events, new Date(at(6)).toISOString(), at(60), false);
    expect(summary(steps)).toEqual([
      ['agent_started', 1_000, 'plain'],
      ['command_started', 3_000, 'done'],
      ['oz_run_done', 0, 'plain'],
    ]);
    expect(steps[1].command).toEqual({
      text: 'npm test',
      output: 'one\ntwo\n',
      truncated: false,
      ending: 'exit code 0',
    });
  });

  it('shows a command without an end as running while the run executes, else as stopped', () => {
    const events = [
      event('command_started', 0, { command_id: 'c2', command: 'make' }),
      event('command_output', 1, { command_id: 'c2', seq: 0, text: 'cc', truncated: true }),
    ];
    const live = timelineSteps(events, null, at(7), true).steps[0];
    expect([live.status, live.durationMs, live.command?.ending]).toEqual([
      'running',
      7_000,
      undefined,
    ]);
    expect(live.command?.truncated).toBe(true);
    const cancelled = timelineSteps(events, new Date(at(3)).toISOString(), at(9), false).steps[0];
    expect([cancelled.status, cancelled.durationMs]).toEqual(['stopped', 3_000]);
  });

  it('makes a failed command and a failed setup step red, saying how they ended', () => {
    const events = [
      event('command_started', 0, { command_id: 'a', command: 'false' }),
      event('command_finished', 1, { command_id: 'a', exit_code: 1, timed_out: false }),
      event('setup_command_started', 2, { command_id: 's', index: 0, command: 'npm ci' }),
      event('setup_command_failed', 5, {
        command_id: 's',
        exit_code: 3,
        timed_out: false,
        output_tail: 'npm error',
      }),
      event('oz_run_failed', 5),
    ];
    const { steps } = timelineSteps(events, new Date(at(5)).toISOString(), at(9), false);
    expect(summary(steps)).toEqual([
      ['command_started', 1_000, 'failed'],
      ['setup_command_started', 3_000, 'failed'],
      ['oz_run_failed', 0, 'failed'],
    ]);
    // No output was streamed: the step shows the last lines its failure recorded.
    expect(steps[1].command).toEqual({
      text: 'npm ci',
      output: 'npm error',
      truncated: false,
      ending: 'exit code 3',
    });
  });

  it('shows a failed clone as a red step naming the repository', () => {
    const events = [
      event('environment_setup_started', 0),
      event('repository_clone_failed', 2, {
        owner: 'acme',
        repo: 'web',
        exit_code: 128,
        timed_out: true,
        output_tail: 'fatal: could not read',
      }),
    ];
    const { steps } = timelineSteps(events, new Date(at(2)).toISOString(), at(9), false);
    expect(steps[1].status).toBe('failed');
    expect(steps[1].command).toEqual({
      text: 'acme/web',
      output: 'fatal: could not read',
      truncated: false,
      ending: 'timed out',
    });
  });
});
