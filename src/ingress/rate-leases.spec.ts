import { LEASE_MS, RateLeases } from './rate-leases';

describe('RateLeases', () => {
  let now: number;
  let leases: RateLeases;
  beforeEach(() => {
    now = 1_000;
    leases = new RateLeases(() => now);
  });

  /** One hit as the limiter takes it: a leased token, or the size of the lease to ask for. */
  const hit = (budget: string, limit: number): 'spent' | number =>
    leases.spend(budget) ? 'spent' : leases.ask(budget, limit);

  it('never leases a budget under ten', () => {
    expect(hit('a', 9)).toBe(0);
    leases.settle('a', { key: 'k', extra: 0 });
    expect(hit('a', 9)).toBe(0);
  });

  it('spends exactly the tokens Redis granted, then asks again', () => {
    expect(hit('a', 60)).toBe(1);
    leases.settle('a', { key: 'k0', extra: 1 });
    expect(hit('a', 60)).toBe('spent');
    // Three hits in this period: the next lease is sized by them.
    expect(hit('a', 60)).toBe(3);
    leases.settle('a', { key: 'k0', extra: 3 });
    expect([hit('a', 60), hit('a', 60), hit('a', 60)]).toEqual(['spent', 'spent', 'spent']);
    expect(hit('a', 60)).toBe(6); // the most of a 60 budget: a tenth
    expect(leases.takeReturns(10)).toEqual([]);
  });

  it('asks once at a time per budget: a hit beside an asking one goes to Redis bare', () => {
    expect(hit('a', 100)).toBe(1);
    expect(hit('a', 100)).toBe(0);
    expect(hit('b', 100)).toBe(1);
    leases.settle('a', null); // the call failed: nothing held, asking again allowed
    expect(hit('a', 100)).toBeGreaterThan(0);
  });

  it('a refused hit holds nothing', () => {
    expect(hit('a', 100)).toBe(1);
    leases.settle('a', { key: 'k0', extra: 0 });
    expect(hit('a', 100)).toBeGreaterThan(0);
  });

  it('gives back what a lease did not spend in time, on the key it was counted on', () => {
    expect(hit('a', 100)).toBe(1);
    leases.settle('a', { key: 'k0', extra: 1 });
    now += LEASE_MS;
    // Expired: not spent, given back, and the hit asks Redis again.
    expect(hit('a', 100)).toBeGreaterThan(0);
    expect(leases.takeReturns(10)).toEqual([{ key: 'k0', tokens: 1 }]);
    leases.settle('a', { key: 'k1', extra: 2 });
    now += LEASE_MS;
    leases.expire();
    expect(leases.takeReturns(10)).toEqual([{ key: 'k1', tokens: 2 }]);
  });

  it('forgets budgets idle for two lease periods, and gives everything back when stopping', () => {
    for (const budget of ['a', 'b', 'c']) {
      hit(budget, 100);
      leases.settle(budget, { key: `k-${budget}`, extra: 2 });
    }
    leases.stop();
    expect(leases.takeReturns(2)).toEqual([
      { key: 'k-a', tokens: 2 },
      { key: 'k-b', tokens: 2 },
    ]);
    expect(leases.takeReturns(2)).toEqual([{ key: 'k-c', tokens: 2 }]);
    expect(leases.size).toBe(3);
    now += 2 * LEASE_MS;
    leases.expire();
    expect(leases.size).toBe(0);
  });

  it('a lease ends with the window its tokens were counted on', () => {
    expect(hit('a', 100)).toBe(1);
    leases.settle('a', { key: 'k0', extra: 5, forMs: 300 });
    expect(hit('a', 100)).toBe('spent');
    now += 300;
    expect(hit('a', 100)).toBeGreaterThan(0);
    expect(leases.takeReturns(10)).toEqual([{ key: 'k0', tokens: 4 }]);
  });

  it('once stopping, asks for nothing and gives back what a call still brings', () => {
    expect(hit('a', 100)).toBe(1);
    leases.stop();
    expect(hit('b', 100)).toBe(0);
    leases.settle('a', { key: 'k0', extra: 1 });
    expect(hit('a', 100)).toBe(0);
    expect(leases.takeReturns(10)).toEqual([{ key: 'k0', tokens: 1 }]);
  });

  it('a grant whose window is already over goes back at once', () => {
    expect(hit('a', 100)).toBe(1);
    leases.settle('a', { key: 'k0', extra: 3, forMs: 0 });
    expect(leases.pendingReturns).toBe(1);
    expect(leases.takeReturns(10)).toEqual([{ key: 'k0', tokens: 3 }]);
    expect(hit('a', 100)).toBeGreaterThan(0);
  });
});
