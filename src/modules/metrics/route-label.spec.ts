import { routeLabel, UNMATCHED_ROUTE } from './route-label';

describe('routeLabel', () => {
  it("is the matched route's template, with the router's mount path", () => {
    expect(routeLabel({ route: { path: '/api/v1/agent/runs/:runId' }, baseUrl: '' })).toBe(
      '/api/v1/agent/runs/:runId',
    );
    expect(routeLabel({ route: { path: '/w/:uid' }, baseUrl: '/webhooks' })).toBe(
      '/webhooks/w/:uid',
    );
  });

  it('is one fixed label for requests no route matched, never the raw path', () => {
    expect(routeLabel({ route: undefined, baseUrl: '' })).toBe(UNMATCHED_ROUTE);
    // Nest's Express adapter answers unknown paths under the prefix with a `*path` catch-all.
    expect(routeLabel({ route: { path: '*path' }, baseUrl: '/api/v1' })).toBe(UNMATCHED_ROUTE);
  });

  it('is the label a handler outside the router set (GET /metrics)', () => {
    expect(routeLabel({ route: undefined, baseUrl: '' }, { metricsRoute: '/metrics' })).toBe(
      '/metrics',
    );
  });
});
