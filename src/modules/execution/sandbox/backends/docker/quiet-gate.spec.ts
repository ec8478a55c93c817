import { QuietGate } from './quiet-gate';

function gateAt(start = 1_000_000) {
  let clock = start;
  const gate = new QuietGate({ quietMs: 1000, maxDeferMs: 5000 }, () => clock);
  return { gate, advance: (ms: number) => (clock += ms) };
}

describe('QuietGate', () => {
  it('lets background work go at once when nothing happened', () => {
    expect(gateAt().gate.waitMs()).toBe(0);
  });

  it('holds it back until nothing happened for the quiet time', () => {
    const { gate, advance } = gateAt();
    gate.touch();
    advance(600);
    gate.touch();
    expect(gate.waitMs()).toBe(1000);
    advance(999);
    expect(gate.waitMs()).toBe(1);
    advance(1);
    expect(gate.waitMs()).toBe(0);
  });

  it('lets it go after the longest deferral however steady the events, then holds it anew', () => {
    const { gate, advance } = gateAt();
    for (let elapsed = 0; elapsed < 5000; elapsed += 500) {
      gate.touch();
      expect(gate.waitMs()).toBeGreaterThan(0);
      advance(500);
    }
    expect(gate.waitMs()).toBe(0);
    gate.touch();
    expect(gate.waitMs()).toBe(1000);
  });
});
