import type { IncomingMessage } from 'node:http';

/** The delivery contract's cap: 256 KB. */
export const MAX_BODY_BYTES = 256 * 1024;

export type BodyRead = { tooLarge: false; body: Buffer } | { tooLarge: true; size: number };

/**
 * Reads a request body up to `max` bytes. A declared Content-Length above the cap is refused
 * before reading anything; a body that grows past it is refused the moment it does, keeping at
 * most `max` bytes in memory (the caller answers 413 and lets Node discard the rest).
 */
export function readCappedBody(req: IncomingMessage, max = MAX_BODY_BYTES): Promise<BodyRead> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    return Promise.resolve({ tooLarge: true, size: declared });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        cleanup();
        chunks.length = 0;
        resolve({ tooLarge: true, size });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve({
        tooLarge: false,
        body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size),
      });
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onAborted = () => onError(new Error('request aborted by the client'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
