import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ApiError } from '../../common/errors/api-error';
import { buildProblem } from '../../common/errors/problem';

/**
 * Refuses a websocket upgrade with a plain HTTP answer carrying the Oz Error model, so a worker
 * (which logs the handshake's status) and a person with curl both see why.
 */
export function writeUpgradeProblem(socket: Duplex, error: ApiError, path: string): void {
  const body = JSON.stringify(
    buildProblem({
      code: error.code,
      title: error.title,
      status: error.status,
      detail: error.detail,
      instance: path,
      retryable: error.retryable,
    }),
  );
  if (!socket.writable) return void socket.destroy();
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n` +
      'Content-Type: application/problem+json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
