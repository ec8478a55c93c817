import { routeWorkerHost, workerIdProblem } from './worker-host';

describe('worker hosts', () => {
  it('sends runs without a worker host, or with "warp", to Ambient\'s own workers', () => {
    expect(routeWorkerHost(undefined)).toEqual({ host: null });
    expect(routeWorkerHost(null)).toEqual({ host: null });
    expect(routeWorkerHost('warp')).toEqual({ host: null });
  });

  it('routes any other valid id to that self-hosted worker, exactly as written', () => {
    expect(routeWorkerHost('Build-Box_1.eu:2')).toEqual({ host: 'Build-Box_1.eu:2' });
  });

  it.each([
    ['warp-1', /reserved/],
    ['WARPED', /reserved/],
    ['', /printable ASCII/],
    ['two words', /printable ASCII/],
    ['é', /printable ASCII/],
    ['x'.repeat(129), /printable ASCII/],
  ])('refuses %j', (id, problem) => {
    expect(workerIdProblem(id)).toMatch(problem);
    expect(routeWorkerHost(id)).toEqual({ problem: expect.stringMatching(problem) });
  });
});
