import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import { ApiError } from './api-error';
import {
  findInvalidUnicode,
  hasLoneSurrogate,
  MAX_DEPTH,
  UnicodePipe,
  unicodeQueryMiddleware,
  verifyUtf8Body,
} from './unicode';

describe('invalid Unicode at the boundary', () => {
  it('finds lone surrogates, not pairs', () => {
    expect(hasLoneSurrogate('ok 🚀 部署 e\u0301')).toBe(false);
    expect(hasLoneSurrogate('a\ud800')).toBe(true);
    expect(hasLoneSurrogate('\udc00b')).toBe(true);
    expect(hasLoneSurrogate('\ud83d\ude80\ud83d')).toBe(true);
  });

  it('names the first bad string by its path, keys included', () => {
    expect(findInvalidUnicode({ prompt: 'ok', metadata: { k: 'bad\ud800x' } })).toBe('metadata.k');
    expect(findInvalidUnicode({ skills: ['a', '\udc00'] })).toBe('skills[1]');
    expect(findInvalidUnicode({ m: { '\ud800': 1 } })).toBe('m.\ud800');
    expect(findInvalidUnicode('x\ud800', 'cursor')).toBe('cursor');
    expect(findInvalidUnicode({ a: [1, null, true, { b: 'fine' }] })).toBeNull();
  });

  it('refuses nesting deeper than the limit, naming where', () => {
    let nested: unknown = 'x';
    for (let i = 0; i < MAX_DEPTH + 1; i++) nested = { d: nested };
    expect(() => findInvalidUnicode({ top: nested })).toThrow(/^top(\.d)+: nested deeper than 64/);
    let fits: unknown = 'x';
    for (let i = 0; i < MAX_DEPTH - 1; i++) fits = { d: fits };
    expect(findInvalidUnicode(fits)).toBeNull();
  });

  it('the pipe refuses bodies and params with 400 (escaped key in the detail), non-ASCII ids with 404', () => {
    const pipe = new UnicodePipe();
    const refusal = (run: () => unknown): ApiError => {
      try {
        run();
      } catch (err) {
        return err as ApiError;
      }
      throw new Error('not refused');
    };
    const body = refusal(() => pipe.transform({ m: { '\ud800': 1 } }, { type: 'body' }));
    expect([body.status, body.detail]).toEqual([400, 'm.\\ud800: must be valid Unicode text']);
    const param = refusal(() => pipe.transform('\ud800', { type: 'param', data: 'uid' }));
    expect([param.status, param.detail]).toEqual([400, 'uid: must be valid Unicode text']);
    const id = refusal(() => pipe.transform('部署', { type: 'param', data: 'runId' }));
    expect(id.status).toBe(404);
    expect(pipe.transform('ok', { type: 'param', data: 'uid' })).toBe('ok');
    expect(pipe.transform({ name: '部署' }, { type: 'body' })).toEqual({ name: '部署' });
  });

  it('verify refuses bytes that are not UTF-8 with a 400 body-parser error', () => {
    const call = (bytes: number[]) => () =>
      verifyUtf8Body({} as IncomingMessage, {} as ServerResponse, Buffer.from(bytes));
    expect(call([0x7b, 0x7d])).not.toThrow();
    expect(call([0xe9, 0x83, 0xa8])).not.toThrow();
    expect(call([0x22, 0xff, 0x22])).toThrow(expect.objectContaining({ status: 400 }));
    expect(call([0xed, 0xa0, 0x80])).toThrow(/valid Unicode/);
  });

  it('the query middleware refuses undecodable names and values, passes the rest', () => {
    const run = (url: string): unknown => {
      let passed: unknown = 'not called';
      unicodeQueryMiddleware({ originalUrl: url } as Request, {} as Response, (err?: unknown) => {
        passed = err;
      });
      return passed;
    };
    expect(run('/api/v1/agent/runs')).toBeUndefined();
    expect(run('/x?q=%E9%83%A8&limit=5&flag')).toBeUndefined();
    expect(run('/x?cursor=%ED%A0%80')).toMatchObject({
      detail: 'cursor: must be valid Unicode text',
    });
    expect(run('/x?limit=%')).toMatchObject({ status: 400 });
    expect(run('/x?%FF=1')).toMatchObject({
      detail: 'query parameter: must be valid Unicode text',
    });
  });
});
