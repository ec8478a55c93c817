import { BroadcastAcks } from './broadcast-acks';

describe('BroadcastAcks', () => {
  afterEach(() => jest.useRealTimers());

  it('ends a wait once every receiver acknowledged, counting those that came before it began', async () => {
    const acks = new BroadcastAcks();
    const seq = acks.open();
    acks.acknowledge(seq); // before PUBLISH's reply said how many receivers there are
    let outcome: unknown;
    const waiting = acks.wait(seq, 3, 60_000).then((o) => (outcome = o));
    acks.acknowledge(seq);
    await Promise.resolve();
    expect(outcome).toBeUndefined();
    acks.acknowledge(seq + 1); // another broadcast's
    acks.acknowledge(seq);
    await waiting;
    expect(outcome).toEqual({ acknowledged: 3, expected: 3 });
  });

  it('ends at once when every receiver had acknowledged already, or when there is none', async () => {
    const acks = new BroadcastAcks();
    const seq = acks.open();
    acks.acknowledge(seq);
    await expect(acks.wait(seq, 1, 60_000)).resolves.toEqual({ acknowledged: 1, expected: 1 });
    await expect(acks.wait(acks.open(), 0, 60_000)).resolves.toEqual({
      acknowledged: 0,
      expected: 0,
    });
  });

  it('gives up at its bound with what it has, and ignores what comes later', async () => {
    jest.useFakeTimers();
    const acks = new BroadcastAcks();
    const seq = acks.open();
    const waiting = acks.wait(seq, 2, 500);
    acks.acknowledge(seq);
    jest.advanceTimersByTime(500);
    await expect(waiting).resolves.toEqual({ acknowledged: 1, expected: 2 });
    acks.acknowledge(seq);
    // A number no longer waited for is forgotten: a new wait under it ends at once, with nothing.
    await expect(acks.wait(seq, 1, 60_000)).resolves.toEqual({ acknowledged: 0, expected: 1 });
  });

  it('forgets an abandoned broadcast', async () => {
    const acks = new BroadcastAcks();
    const seq = acks.open();
    acks.abandon(seq);
    acks.acknowledge(seq);
    await expect(acks.wait(seq, 1, 60_000)).resolves.toEqual({ acknowledged: 0, expected: 1 });
  });

  it('ends every wait at once when acknowledgements can no longer come', async () => {
    const acks = new BroadcastAcks();
    const waited = acks.open();
    const notYetWaited = acks.open();
    acks.acknowledge(waited);
    const waiting = acks.wait(waited, 3, 60_000);
    acks.endAll();
    await expect(waiting).resolves.toEqual({ acknowledged: 1, expected: 3 });
    await expect(acks.wait(notYetWaited, 2, 60_000)).resolves.toEqual({
      acknowledged: 0,
      expected: 2,
    });
  });
});
