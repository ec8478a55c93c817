import { formatSseEvent, SseEvent, SseParser } from '../common/sse';
import { RunEventLines } from './run-event-lines';

function event(name: string, data: unknown): SseEvent {
  let parsed: SseEvent | undefined;
  new SseParser((e) => (parsed = e)).push(formatSseEvent(name, data, '1-1'));
  return parsed!;
}

describe('runs watch lines', () => {
  it('prints a state once, again only when it or its status changes', () => {
    const lines = new RunEventLines();
    const run = (state: string, message?: string) =>
      lines.lines(event('run', { state, ...(message ? { status_message: { message } } : {}) }));
    expect(run('QUEUED')[0]).toMatch(/^\d\d:\d\d:\d\d {2}state QUEUED$/);
    expect(run('QUEUED')).toEqual([]);
    expect(run('SUCCEEDED', 'Done\nand dusted')[0]).toMatch(/state SUCCEEDED: Done and dusted$/);
  });

  it('prints a command as a terminal would: the command, its output line by line, how it ended', () => {
    const lines = new RunEventLines();
    const timeline = (event_type: string, payload: Record<string, unknown>) =>
      lines.lines(
        event('timeline', { event_type, occurred_at: '2026-11-25T15:01:02.345Z', payload }),
      );
    expect(timeline('command_started', { command_id: 'c', command: 'npm test' })).toEqual([
      '15:01:02  $ npm test',
    ]);
    expect(
      timeline('command_output', {
        command_id: 'c',
        seq: 0,
        text: 'ok 1\n\n  ok 2\r\n',
        truncated: true,
      }),
    ).toEqual(['15:01:02  | ok 1', '15:01:02  |   ok 2', '15:01:02  | … (live output stops here)']);
    expect(
      timeline('command_finished', {
        command_id: 'c',
        exit_code: 1,
        timed_out: false,
        duration_ms: 830,
      }),
    ).toEqual(['15:01:02  command ended: exit code 1 (830 ms)']);
    expect(timeline('setup_command_started', { index: 0, command: 'npm ci' })).toEqual([
      '15:01:02  $ npm ci (setup)',
    ]);
  });

  it('prints timeline events and each block of a message on one line', () => {
    const lines = new RunEventLines();
    expect(
      lines.lines(
        event('timeline', {
          event_type: 'oz_run_claimed',
          occurred_at: '2026-11-25T15:01:02.345Z',
          execution_id: 1,
        }),
      ),
    ).toEqual(['15:01:02  timeline oz_run_claimed (execution 1)']);
    expect(
      lines.lines(
        event('message', {
          role: 'assistant',
          timestamp: '2026-11-25T15:01:03.000Z',
          content: [
            { type: 'text', text: 'Let me look.' },
            { type: 'action', name: 'run_command', input: { command: 'ls' } },
          ],
        }),
      ),
    ).toEqual([
      '15:01:03  assistant: Let me look.',
      '15:01:03  assistant → run_command {"command":"ls"}',
    ]);
    const long = 'x'.repeat(500);
    const [result] = lines.lines(
      event('message', {
        role: 'tool',
        timestamp: '2026-11-25T15:01:04.000Z',
        content: [
          {
            type: 'action_result',
            name: 'run_command',
            state: 'completed',
            output: { text: long },
          },
        ],
      }),
    );
    expect(result).toMatch(/^15:01:04 {2}run_command completed: x+…$/);
    expect(result.length).toBeLessThan(240);
  });
});
