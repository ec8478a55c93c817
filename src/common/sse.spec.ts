import { formatSseComment, formatSseEvent, SseEvent, SseParser } from './sse';

function parseAll(chunks: string[]): { events: SseEvent[]; comments: string[] } {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const parser = new SseParser(
    (e) => events.push(e),
    (c) => comments.push(c),
  );
  chunks.forEach((c) => parser.push(c));
  return { events, comments };
}

describe('SSE framing', () => {
  it('writes id, event and one data line of JSON, ended by a blank line', () => {
    expect(formatSseEvent('run', { state: 'QUEUED', text: 'a\nb' }, '4-2')).toBe(
      'id: 4-2\nevent: run\ndata: {"state":"QUEUED","text":"a\\nb"}\n\n',
    );
    expect(formatSseEvent('timeline', [1])).toBe('event: timeline\ndata: [1]\n\n');
    expect(formatSseComment('keep-alive')).toBe(': keep-alive\n\n');
    expect(formatSseComment('two\r\nlines')).toBe(': two lines\n\n');
  });

  it('refuses ids and names that would break the framing', () => {
    expect(() => formatSseEvent('run\n', {})).toThrow('one line');
    expect(() => formatSseEvent('run', {}, '1\r2')).toThrow('one line');
  });

  it('reads back what it writes, however the bytes are split', () => {
    const wire =
      formatSseComment('keep-alive') +
      formatSseEvent('run', { a: 'ü\n' }, '1-0') +
      formatSseEvent('message', { b: 2 }, '1-7');
    const whole = parseAll([wire]);
    expect(whole.events).toEqual([
      { event: 'run', data: '{"a":"ü\\n"}', id: '1-0' },
      { event: 'message', data: '{"b":2}', id: '1-7' },
    ]);
    expect(whole.comments).toEqual(['keep-alive']);
    for (let i = 1; i < wire.length; i++) {
      expect(parseAll([wire.slice(0, i), wire.slice(i)])).toEqual(whole);
    }
    expect(parseAll(wire.split(''))).toEqual(whole);
  });

  it('follows the spec: CRLF and CR line ends, joined data lines, default name, kept id', () => {
    const { events } = parseAll([
      'id: 7\r\ndata: one\r\ndata:two\r\n\r\n',
      'data: three\r\rretry: 10\nfield-without-colon\n\n',
      'event: x\n\n',
    ]);
    expect(events).toEqual([
      { event: 'message', data: 'one\ntwo', id: '7' },
      { event: 'message', data: 'three', id: '7' },
    ]);
  });

  it('waits for the LF of a CRLF split across chunks', () => {
    const { events } = parseAll(['data: a\r', '\n\r', '\n']);
    expect(events).toEqual([{ event: 'message', data: 'a', id: undefined }]);
  });
});
