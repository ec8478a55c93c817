import { BurstGate } from './burst-gate';

function gateAt() {
  let clock = 1_000_000;
  const gate = new BurstGate({ size: 3, windowMs: 10_000, pollMs: 250 }, () => clock);
  return { gate, advance: (ms: number) => (clock += ms) };
}

describe('BurstGate', () => {
  it('sees no burst in sandboxes opened one after another', () => {
    const { gate, advance } = gateAt();
    for (let i = 0; i < 10; i++) {
      const closed = gate.opened();
      expect(gate.waitMs()).toBe(0);
      advance(100);
      closed();
    }
  });

  it('holds background work back while enough sandboxes opened recently are still open', () => {
    const { gate, advance } = gateAt();
    const closes = [gate.opened(), gate.opened()];
    expect(gate.waitMs()).toBe(0);
    closes.push(gate.opened());
    expect(gate.waitMs()).toBe(250);
    // One of them closed: no burst any more.
    closes[0]();
    expect(gate.waitMs()).toBe(0);
    closes.push(gate.opened());
    expect(gate.waitMs()).toBe(250);
    // Long-running sandboxes of a burst long past are no burst.
    advance(10_000);
    expect(gate.waitMs()).toBe(0);
  });
});
