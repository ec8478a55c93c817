import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { EGRESS_HEADER } from './egress-decisions';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  431: 'Request Header Fields Too Large',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** The egress header's value: `denied` when the policy or guard refused, `error` otherwise. */
function egressValue(status: number): string {
  return status === 403 ? 'denied' : 'error';
}

/** Answers a raw client socket (a CONNECT, a malformed request) and closes it. */
export function refuseSocket(socket: Duplex, status: number, message: string): void {
  if (socket.destroyed) return;
  const body = `${message}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\n` +
      `${EGRESS_HEADER}: ${egressValue(status)}\r\n` +
      'Content-Type: text/plain; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/** Answers a parsed request (plain HTTP, or inside an intercepted tunnel). */
export function refuseResponse(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `${message}\n`;
  res.writeHead(status, {
    [EGRESS_HEADER]: egressValue(status),
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}
