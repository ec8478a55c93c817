import { waitFor } from '../../../../test/support/wait';
import { CommandOutputStream, withStreamedOutput } from './command-output';

type Sent = { type: string; payload: Record<string, unknown> };

/** An emitter that records what it is given (in order) and can be told to fail. */
function recorder(fail = false) {
  const sent: Sent[] = [];
  const emit = async (type: string, payload: Record<string, unknown> = {}) => {
    if (fail) throw new Error('the execution lost its run');
    sent.push({ type, payload });
  };
  return { sent, emit, texts: () => sent.map((s) => s.payload.text) };
}

const LIMITS = { chunkChars: 4, flushMs: 60_000, maxChars: 10 };

describe('CommandOutputStream', () => {
  it('sends full chunks at once and the rest when closed, numbered in order', async () => {
    const { sent, emit, texts } = recorder();
    const stream = new CommandOutputStream('cmd-1', emit, LIMITS);
    stream.write(Buffer.from('abcdef'));
    stream.write(Buffer.from('g'));
    await stream.close();
    expect(texts()).toEqual(['abcd', 'efg']);
    expect(sent.map((s) => [s.type, s.payload.command_id, s.payload.seq])).toEqual([
      ['command_output', 'cmd-1', 0],
      ['command_output', 'cmd-1', 1],
    ]);
  });

  it('sends a short piece after flushMs without waiting for more', async () => {
    const { emit, texts } = recorder();
    const stream = new CommandOutputStream('cmd-2', emit, { ...LIMITS, flushMs: 5 });
    stream.write(Buffer.from('hi\n'));
    await waitFor(
      async () => texts(),
      (t) => t.length > 0,
      {
        what: 'the timer to send the piece',
        intervalMs: 5,
      },
    );
    expect(texts()).toEqual(['hi\n']);
    await stream.close();
    expect(texts()).toEqual(['hi\n']);
  });

  it('stops after maxChars, marking the last event truncated', async () => {
    const { sent, emit, texts } = recorder();
    const stream = new CommandOutputStream('cmd-3', emit, LIMITS);
    stream.write(Buffer.from('0123456789ABCDEF'));
    stream.write(Buffer.from('more'));
    await stream.close();
    expect(texts()).toEqual(['0123', '4567', '89']);
    expect(sent.at(-1)?.payload.truncated).toBe(true);
    expect(sent.slice(0, -1).every((s) => s.payload.truncated === undefined)).toBe(true);
  });

  it('marks the end when output goes on after exactly maxChars were sent', async () => {
    const { sent, emit, texts } = recorder();
    const stream = new CommandOutputStream('cmd-4', emit, { ...LIMITS, maxChars: 8 });
    stream.write(Buffer.from('01234567'));
    stream.write(Buffer.from('x'));
    await stream.close();
    expect(texts()).toEqual(['0123', '4567', '']);
    expect(sent.at(-1)?.payload.truncated).toBe(true);
  });

  it('never splits a character that arrives in two pieces', async () => {
    const { emit, texts } = recorder();
    const stream = new CommandOutputStream('cmd-5', emit, { ...LIMITS, chunkChars: 100 });
    const euro = Buffer.from('€');
    stream.write(euro.subarray(0, 1));
    stream.write(euro.subarray(1));
    await stream.close();
    expect(texts()).toEqual(['€']);
  });

  it('gives up quietly when an event cannot be recorded', async () => {
    const { emit, sent } = recorder(true);
    const stream = new CommandOutputStream('cmd-6', emit, LIMITS);
    stream.write(Buffer.from('abcdefgh'));
    await expect(stream.close()).resolves.toBeUndefined();
    expect(sent).toEqual([]);
  });
});

describe('withStreamedOutput', () => {
  it('runs the command without a callback when there is nothing to emit to', async () => {
    const result = await withStreamedOutput(undefined, 'cmd', async (onOutput) => onOutput);
    expect(result).toBeUndefined();
  });

  it('has every piece recorded by the time the command’s result is returned', async () => {
    const { emit, texts } = recorder();
    const result = await withStreamedOutput(emit, 'cmd', async (onOutput) => {
      onOutput?.(Buffer.from('done\n'));
      return 7;
    });
    expect(result).toBe(7);
    expect(texts()).toEqual(['done\n']);
  });
});
