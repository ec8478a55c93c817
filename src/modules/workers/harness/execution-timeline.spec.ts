import { ExecutionTimeline, MAX_EVENTS_PER_WRITE, type RecordedEvent } from './execution-timeline';

/** A batch writer that records each write and can be told to fail the next one. */
function writer() {
  const writes: RecordedEvent[][] = [];
  let failNext = false;
  let written: () => void = () => undefined;
  const write = async (events: RecordedEvent[]) => {
    if (failNext) {
      failNext = false;
      throw new Error('the execution lost its run');
    }
    writes.push(events);
    written();
  };
  const nextWrite = () => new Promise<void>((resolve) => (written = resolve));
  const types = () => writes.map((w) => w.map((e) => e.eventType));
  return {
    writes,
    types,
    timeline: new ExecutionTimeline(write),
    nextWrite,
    failOnce: () => (failNext = true),
  };
}

describe('ExecutionTimeline', () => {
  afterEach(() => jest.useRealTimers());

  it('writes each event as it comes while nothing holds them', async () => {
    const { timeline, types } = writer();
    await timeline.emit('secrets_skipped');
    await timeline.emit('mcp_servers_connected');
    expect(types()).toEqual([['secrets_skipped'], ['mcp_servers_connected']]);
  });

  it('writes what a hold kept in one write, in order, each event with the time it happened', async () => {
    jest.useFakeTimers({ now: new Date('2026-12-05T12:00:00.000Z') });
    const { timeline, writes, types } = writer();
    const release = timeline.hold(250);
    await timeline.emit('command_started', { command_id: 'c' });
    jest.setSystemTime(new Date('2026-12-05T12:00:00.040Z'));
    // Emitted from elsewhere meanwhile (the egress proxy): it keeps its place.
    await timeline.emit('egress_denied', { host: 'blocked.example' });
    jest.setSystemTime(new Date('2026-12-05T12:00:00.090Z'));
    await timeline.emit('command_finished', { command_id: 'c', exit_code: 0 });
    expect(writes).toEqual([]);
    await release();
    expect(types()).toEqual([['command_started', 'egress_denied', 'command_finished']]);
    expect(writes[0].map((e) => e.occurredAt.toISOString())).toEqual([
      '2026-12-05T12:00:00.000Z',
      '2026-12-05T12:00:00.040Z',
      '2026-12-05T12:00:00.090Z',
    ]);
    await timeline.emit('after');
    expect(types()).toHaveLength(2);
  });

  it('writes what it held once the hold is over, then each event as it comes', async () => {
    jest.useFakeTimers();
    const { timeline, types, nextWrite } = writer();
    const release = timeline.hold(250);
    await timeline.emit('command_started');
    jest.advanceTimersByTime(249);
    await Promise.resolve();
    expect(types()).toEqual([]);
    const heldWrite = nextWrite();
    jest.advanceTimersByTime(1);
    await heldWrite;
    await timeline.emit('command_output');
    await timeline.emit('command_finished');
    await release(); // a release after the hold ran out writes nothing more
    expect(types()).toEqual([['command_started'], ['command_output'], ['command_finished']]);
  });

  it('keeps holding while another hold lasts', async () => {
    const { timeline, types } = writer();
    const first = timeline.hold(60_000);
    const second = timeline.hold(60_000);
    await timeline.emit('a');
    await first();
    expect(types()).toEqual([]);
    await second();
    expect(types()).toEqual([['a']]);
  });

  it('fails the emits of a write that failed, and goes on with the next one', async () => {
    const { timeline, types, failOnce } = writer();
    failOnce();
    await expect(timeline.emit('lost')).rejects.toThrow('lost its run');
    await timeline.emit('kept');
    const release = timeline.hold(60_000);
    await timeline.emit('held');
    failOnce();
    await expect(release()).rejects.toThrow('lost its run');
    await timeline.emit('later');
    expect(types()).toEqual([['kept'], ['later']]);
  });

  it('writes at most MAX_EVENTS_PER_WRITE events at a time, in order', async () => {
    const { timeline, writes } = writer();
    const release = timeline.hold(60_000);
    for (let i = 0; i < MAX_EVENTS_PER_WRITE + 5; i++) await timeline.emit(`e${i}`);
    await release();
    expect(writes.map((w) => w.length)).toEqual([MAX_EVENTS_PER_WRITE, 5]);
    expect(writes.flat().map((e) => e.eventType)).toEqual(
      Array.from({ length: MAX_EVENTS_PER_WRITE + 5 }, (_, i) => `e${i}`),
    );
  });

  it('sends what was emitted during a slow write together in the next one', async () => {
    const batches: string[][] = [];
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let writing: () => void = () => undefined;
    const firstWriteStarted = new Promise<void>((resolve) => (writing = resolve));
    const timeline = new ExecutionTimeline(async (events) => {
      batches.push(events.map((e) => e.eventType));
      writing();
      if (batches.length === 1) await gate;
    });
    const first = timeline.emit('first');
    await firstWriteStarted;
    const later = [timeline.emit('a'), timeline.emit('b'), timeline.emit('c')];
    open();
    await Promise.all([first, ...later]);
    expect(batches).toEqual([['first'], ['a', 'b', 'c']]);
  });

  it('goes on writing after a writer that failed at once', async () => {
    let calls = 0;
    const written: string[] = [];
    const timeline = new ExecutionTimeline((events) => {
      if (++calls === 1) throw new Error('refused before any I/O');
      written.push(...events.map((e) => e.eventType));
      return Promise.resolve();
    });
    await expect(timeline.emit('lost')).rejects.toThrow('refused before any I/O');
    await timeline.emit('kept');
    expect(written).toEqual(['kept']);
  });
});
