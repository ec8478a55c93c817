import { waitFor } from '../../../../test/support/wait';
import {
  CommandOutputStream,
  HeldEvents,
  withStreamedOutput,
  type TimelineEvent,
} from './command-output';

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

describe('HeldEvents', () => {
  afterEach(() => jest.useRealTimers());

  /** A batch writer that records each write and can be told to fail the next one. */
  function writer() {
    const writes: TimelineEvent[][] = [];
    let failNext = false;
    let written: () => void = () => undefined;
    const emitEvents = async (events: TimelineEvent[]) => {
      if (failNext) {
        failNext = false;
        throw new Error('the execution lost its run');
      }
      writes.push(events);
      written();
    };
    const nextWrite = () => new Promise<void>((resolve) => (written = resolve));
    return { writes, emitEvents, nextWrite, failOnce: () => (failNext = true) };
  }

  it('writes what it held in one write, in order, each event with the time it happened', async () => {
    jest.useFakeTimers({ now: new Date('2026-12-05T12:00:00.000Z') });
    const { writes, emitEvents } = writer();
    const held = new HeldEvents(emitEvents, 250);
    await held.emit('command_started', { command_id: 'c' });
    jest.setSystemTime(new Date('2026-12-05T12:00:00.040Z'));
    await held.emit('command_output', { command_id: 'c', seq: 0, text: 'hi' });
    jest.setSystemTime(new Date('2026-12-05T12:00:00.090Z'));
    await held.emit('command_finished', { command_id: 'c', exit_code: 0 });
    expect(writes).toEqual([]);
    await held.release();
    expect(writes).toHaveLength(1);
    expect(writes[0].map((e) => [e.eventType, e.occurredAt.toISOString()])).toEqual([
      ['command_started', '2026-12-05T12:00:00.000Z'],
      ['command_output', '2026-12-05T12:00:00.040Z'],
      ['command_finished', '2026-12-05T12:00:00.090Z'],
    ]);
  });

  it('writes its held events once the hold is over, then each one as it comes', async () => {
    jest.useFakeTimers();
    const { writes, emitEvents, nextWrite } = writer();
    const held = new HeldEvents(emitEvents, 250);
    await held.emit('command_started');
    jest.advanceTimersByTime(249);
    await Promise.resolve();
    expect(writes).toEqual([]);
    const heldWrite = nextWrite();
    jest.advanceTimersByTime(1);
    await heldWrite;
    await held.emit('command_output');
    expect(writes.map((w) => w.map((e) => e.eventType))).toEqual([
      ['command_started'],
      ['command_output'],
    ]);
  });

  it('fails the emits of a write that failed, and goes on with the next one', async () => {
    const { writes, emitEvents, failOnce } = writer();
    const held = new HeldEvents(emitEvents, 60_000);
    await held.emit('command_started');
    failOnce();
    await expect(held.release()).rejects.toThrow('lost its run');
    await held.emit('command_finished');
    expect(writes.map((w) => w.map((e) => e.eventType))).toEqual([['command_finished']]);
  });
});
