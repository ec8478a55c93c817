import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import { ExecutionCa } from '../../src/modules/workers/sandbox/egress-proxy/execution-ca';

/** What an upstream saw of one request. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bodyBytes: number;
}

/**
 * `GET /bytes/<n>` answers n bytes, `GET /bytes/<n>?rate=<bytes per second>` at that rate (as
 * a download from the internet arrives); anything else echoes the request as JSON.
 */
function upstreamHandler(seen: SeenRequest[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const size = /^\/bytes\/(\d+)(?:\?rate=(\d+))?$/.exec(req.url ?? '');
    if (size) {
      req.resume();
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': Number(size[1]),
      });
      if (size[2]) sendPaced(res, Number(size[1]), Number(size[2]));
      else sendBytes(res, Number(size[1]));
      return;
    }
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
    req.on('end', () => {
      const entry = { method: req.method!, url: req.url!, headers: req.headers, bodyBytes };
      seen.push(entry);
      const body = JSON.stringify(entry);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
  };
}

const CHUNK = Buffer.alloc(64 * 1024, 'x');

function sendBytes(res: ServerResponse, total: number): void {
  let left = total;
  const pump = () => {
    while (left > 0) {
      const piece = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
      left -= piece.length;
      if (!res.write(piece)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  pump();
}

/** How long a line at full rate may send at once after a pause (a late timer, a full socket). */
const BURST_SECONDS = 0.01;

/**
 * Sends `total` bytes at `bytesPerSecond` with a token bucket: the tokens accrue with the clock,
 * so a timer that fires late sends what the line would have sent meanwhile (up to one burst),
 * and the average holds at rates where a sleep per chunk could not.
 */
function sendPaced(res: ServerResponse, total: number, bytesPerSecond: number): void {
  const burst = Math.max(2 * CHUNK.length, bytesPerSecond * BURST_SECONDS);
  let tokens = 0;
  let last = performance.now();
  let left = total;
  const pump = () => {
    if (res.destroyed) return;
    const now = performance.now();
    tokens = Math.min(burst, tokens + ((now - last) / 1000) * bytesPerSecond);
    last = now;
    while (left > 0) {
      const size = Math.min(left, CHUNK.length);
      if (tokens < size) {
        setTimeout(pump, Math.ceil(((size - tokens) / bytesPerSecond) * 1000));
        return;
      }
      tokens -= size;
      left -= size;
      if (!res.write(size === CHUNK.length ? CHUNK : CHUNK.subarray(0, size))) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  pump();
}

/**
 * An HTTPS and a plain HTTP server on 127.0.0.1, the HTTPS one presenting, for whatever name
 * the client sends in SNI, a leaf of its own CA (`ca.certPem`, the trust a client or proxy
 * needs).
 */
export interface Upstreams {
  ca: ExecutionCa;
  httpsPort: number;
  httpPort: number;
  seen: SeenRequest[];
  close(): Promise<void>;
}

export async function startUpstreams(): Promise<Upstreams> {
  const ca = await ExecutionCa.create({ label: 'upstream test' });
  const seen: SeenRequest[] = [];
  const https = createHttpsServer(
    {
      SNICallback: (name, done) => {
        ca.leafFor(name).then(
          (leaf) => done(null, leaf.context),
          (err: Error) => done(err),
        );
      },
    },
    upstreamHandler(seen),
  );
  const http = createHttpServer(upstreamHandler(seen));
  const sockets = new Set<Socket>();
  for (const server of [https, http]) {
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
  }
  const httpsPort = await listenLocal(https);
  const httpPort = await listenLocal(http);
  return {
    ca,
    httpsPort,
    httpPort,
    seen,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all([https, http].map((s) => new Promise((r) => s.close(r))));
      ca.close();
    },
  };
}

function listenLocal(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

export interface ProxyAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Reads a response's whole body as text. */
export function readAnswer(res: IncomingMessage): Promise<ProxyAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('error', reject);
    res.on('end', () =>
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }),
    );
  });
}

/**
 * Sends `CONNECT authority` to the proxy on `socketPath`: the tunnel's socket on 200, the
 * proxy's answer otherwise.
 */
export function connectThrough(
  socketPath: string,
  authority: string,
): Promise<{ socket: Socket } | { refused: ProxyAnswer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath, method: 'CONNECT', path: authority, agent: false });
    req.on('connect', (res: IncomingMessage, socket: Socket, head: Buffer) => {
      if (res.statusCode === 200) {
        if (head.length > 0) socket.unshift(head);
        resolve({ socket });
        return;
      }
      const chunks: Buffer[] = [head];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('close', () =>
        resolve({
          refused: {
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          },
        }),
      );
    });
    req.on('response', (res: IncomingMessage) => {
      void readAnswer(res).then((refused) => resolve({ refused }), reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** TLS over a tunnel's socket, trusting `ca` only, with `servername` as SNI. */
export function tlsOver(socket: Duplex, servername: string, ca: string[]): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const tls = tlsConnect({ socket, servername, ca, ALPNProtocols: ['http/1.1'] }, () =>
      resolve(tls),
    );
    tls.once('error', reject);
  });
}

export interface RequestSpec {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** One HTTP request over an already-connected socket (a TLS tunnel), keeping the socket open. */
export function requestOver(socket: Duplex, host: string, spec: RequestSpec): Promise<ProxyAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      createConnection: () => socket as Socket,
      method: spec.method ?? 'GET',
      path: spec.path,
      headers: { host, connection: 'keep-alive', ...spec.headers },
    });
    req.on('response', (res) => void readAnswer(res).then(resolve, reject));
    req.on('error', reject);
    req.end(spec.body);
  });
}

/** A plain-HTTP request in absolute form to the proxy on `socketPath`. */
export function plainThrough(
  socketPath: string,
  url: string,
  spec: Omit<RequestSpec, 'path'> = {},
): Promise<ProxyAnswer> {
  const { host } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      socketPath,
      method: spec.method ?? 'GET',
      path: url,
      headers: { host, ...spec.headers },
      agent: false,
    });
    req.on('response', (res) => void readAnswer(res).then(resolve, reject));
    req.on('error', reject);
    req.end(spec.body);
  });
}
