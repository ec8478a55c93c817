import { SseParser } from './sse';

describe('SseParser', () => {
  it('parses events split across chunks, keeps the last id and skips comments', () => {
    const parser = new SseParser();
    expect(parser.push('id: 1\nevent: run\nda')).toEqual([]);
    expect(parser.push('ta: {"a":1}\n\n: keep-alive\n\nevent: timeline\r\ndata: x\r')).toEqual([
      { id: '1', event: 'run', data: '{"a":1}' },
    ]);
    expect(parser.push('\n\r\n')).toEqual([{ id: '1', event: 'timeline', data: 'x' }]);
  });

  it('joins multi-line data and defaults the event name to message', () => {
    const parser = new SseParser();
    expect(parser.push('data: a\ndata:b\nid: 7\n\n')).toEqual([
      { id: '7', event: 'message', data: 'a\nb' },
    ]);
  });
});
