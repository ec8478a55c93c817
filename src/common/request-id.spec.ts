import { requestIdFor } from './request-id';

describe('requestIdFor', () => {
  it("keeps a caller's sane X-Request-Id", () => {
    expect(requestIdFor({ 'x-request-id': 'req-42.a:b/c@d+e=f_g' })).toBe('req-42.a:b/c@d+e=f_g');
    expect(requestIdFor({ 'x-request-id': 'x'.repeat(128) })).toBe('x'.repeat(128));
  });

  it.each([
    ['too long', 'x'.repeat(129)],
    ['empty', ''],
    ['spaces', 'a b'],
    ['a newline (log injection)', 'abc\n{"level":"fatal"}'],
    ['quotes', 'a"b'],
    ['non-ASCII', 'réq'],
  ])('replaces one that is %s with a new 32-hex id', (_why, value) => {
    const id = requestIdFor({ 'x-request-id': value });
    expect(id).not.toBe(value);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('takes the trace id of a valid traceparent, never an all-zero one', () => {
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    expect(requestIdFor({ traceparent: `00-${trace}-00f067aa0ba902b7-01` })).toBe(trace);
    const zero = requestIdFor({ traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` });
    expect(zero).not.toBe('0'.repeat(32));
  });

  it('generates a fresh id per request without one', () => {
    expect(requestIdFor({})).not.toBe(requestIdFor({}));
  });
});
