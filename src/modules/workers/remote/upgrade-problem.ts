import { IncomingHttpHeaders, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ApiError } from '../../../common/errors/api-error';
import { buildProblem } from '../../../common/errors/problem';
import { REQUEST_ID_HEADER, requestIdFor } from '../../../common/request-id';

/**
 * Refuses a websocket upgrade with a plain HTTP answer carrying the Oz Error model, so a worker
 * (which logs the handshake's status) and a person with curl both see why.
 */
export function writeUpgradeProblem(
  socket: Duplex,
  error: ApiError,
  path: string,
  headers: IncomingHttpHeaders,
): void {
  const traceId = requestIdFor(headers);
  const body = JSON.stringify(
    buildProblem({
      code: error.code,
      title: error.title,
      status: error.status,
      detail: error.detail,
      instance: path,
      retryable: error.retryable,
      traceId,
    }),
  );
  if (!socket.writable) return void socket.destroy();
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n` +
      'Content-Type: application/problem+json\r\n' +
      `${REQUEST_ID_HEADER}: ${traceId}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
