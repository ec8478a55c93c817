import { formatCursor, parseCursor, STREAM_START } from './stream-cursor';

describe('stream cursor (SSE ids)', () => {
  it('round-trips timeline and message ids', () => {
    const cursor = { timeline: 42n, message: 9007199254740993n };
    expect(formatCursor(cursor)).toBe('42-9007199254740993');
    expect(parseCursor(formatCursor(cursor))).toEqual(cursor);
    expect(parseCursor(' 0-0 ')).toEqual(STREAM_START);
  });

  it.each(['', '42', '42-', '-1-2', '1-2-3', 'a-b', '1.5-2', '9223372036854775808-0', 'x 1-2'])(
    'refuses %j',
    (text) => {
      expect(parseCursor(text)).toBeNull();
    },
  );

  it('accepts the largest BIGINT', () => {
    expect(parseCursor('9223372036854775807-0')?.timeline).toBe(2n ** 63n - 1n);
  });
});
