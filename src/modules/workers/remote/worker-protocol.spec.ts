import { encodeMessage, parseServerMessage, parseWorkerMessage } from './worker-protocol';

describe('worker protocol', () => {
  it('reads the worker messages of oz-agent-worker', () => {
    expect(
      parseWorkerMessage('{"type":"task_claimed","data":{"task_id":"r1","worker_id":"w"}}'),
    ).toEqual({ message: { type: 'task_claimed', data: { task_id: 'r1', worker_id: 'w' } } });
    const failed = parseWorkerMessage(
      JSON.stringify({
        type: 'task_failed',
        data: { task_id: 'r1', message: 'oom', failure_cause: 'oom', exit_code: 137 },
      }),
    );
    expect(failed).toEqual({
      message: {
        type: 'task_failed',
        data: { task_id: 'r1', message: 'oom', failure_cause: 'oom', exit_code: 137 },
      },
    });
  });

  it.each([
    ['not json', 'not JSON'],
    ['[1]', 'not a {type, data} object'],
    ['{"data":{}}', 'no type'],
    ['{"type":"heartbeat","data":{}}', 'unknown type "heartbeat"'],
    ['{"type":"task_claimed"}', 'task_claimed without a data object'],
    ['{"type":"task_rejected","data":{"reason":"full"}}', 'task_rejected without a task_id'],
    // A worker may not send server messages.
    ['{"type":"task_assignment","data":{"task_id":"r1"}}', 'unknown type "task_assignment"'],
  ])('ignores %s, saying why', (frame, why) => {
    expect(parseWorkerMessage(frame)).toEqual({ ignored: why });
  });

  it('reads server messages and insists on the task of an assignment', () => {
    const cancel = encodeMessage({ type: 'task_cancellation', data: { task_id: 'r1' } });
    expect(parseServerMessage(cancel)).toEqual({
      message: { type: 'task_cancellation', data: { task_id: 'r1' } },
    });
    expect(parseServerMessage('{"type":"task_assignment","data":{"task_id":"r1"}}')).toEqual({
      ignored: 'task_assignment without a task',
    });
  });
});
