import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { buildProblem } from './problem';

/** Node's own refusals, before any route runs: a request line or headers over the size limit… */
const STATUS_FOR_CODE: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * Requests Node's HTTP parser refuses never reach Express (a URL or headers over 16 KB, a broken
 * request line): answer them in the Oz `Error` model as well, instead of Node's empty 400/431.
 */
export function answerClientErrorsAsProblems(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = STATUS_FOR_CODE[err.code ?? ''] ?? 400;
    const problem = buildProblem({
      code: 'invalid_request',
      title: 'Invalid request',
      status,
      detail:
        status === 431
          ? 'the request line or headers are too large'
          : status === 408
            ? 'the request was not received in time'
            : 'the request is not valid HTTP',
    });
    const body = JSON.stringify(problem);
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\n` +
        'Content-Type: application/problem+json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
