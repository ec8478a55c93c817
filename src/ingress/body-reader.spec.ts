import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { readCappedBody } from './body-reader';

function request(contentLength?: number) {
  const stream = new PassThrough();
  Object.assign(stream, {
    headers: contentLength === undefined ? {} : { 'content-length': String(contentLength) },
  });
  return stream as PassThrough & IncomingMessage;
}

describe('readCappedBody', () => {
  it('returns the whole body when it fits', async () => {
    const req = request();
    const read = readCappedBody(req, 10);
    req.write('01234');
    req.end('56789');
    expect(await read).toEqual({ tooLarge: false, body: Buffer.from('0123456789') });
  });

  it('refuses a declared Content-Length over the cap without reading', async () => {
    const req = request(11);
    expect(await readCappedBody(req, 10)).toEqual({ tooLarge: true, size: 11 });
    expect(req.listenerCount('data')).toBe(0);
  });

  it('refuses a streamed body the moment it passes the cap, before it ends', async () => {
    const req = request();
    const read = readCappedBody(req, 10);
    req.write('0123456789');
    req.write('X'); // never ended: the answer must not wait for the rest
    expect(await read).toEqual({ tooLarge: true, size: 11 });
    expect(req.listenerCount('data')).toBe(0);
  });

  it('fails when the client aborts', async () => {
    const req = request();
    const read = readCappedBody(req, 10);
    req.emit('aborted');
    await expect(read).rejects.toThrow(/aborted/);
  });
});
