import { spawn } from 'node:child_process';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https';
import { AddressInfo } from 'node:net';

export interface GitHttpServer {
  url: string;
  /** Authorization headers the server saw, in order. */
  authorizations: (string | undefined)[];
  /** Every request, in order: the local address it reached and its Authorization header. */
  requests: { address: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

export interface GitHttpServerOptions {
  /** Serve HTTPS with this key and certificate (PEM) instead of plain HTTP. */
  tls?: { key: string; cert: string };
  /** The address to listen on (127.0.0.1 by default; 0.0.0.0 serves every loopback address). */
  host?: string;
}

/**
 * Serves the bare repositories under `root` over smart HTTP (`git http-backend` as CGI), refusing
 * any request without `Authorization: Basic base64(x-access-token:<token>)` — a private GitHub.
 */
export async function startGitHttpServer(
  root: string,
  token: string,
  options: GitHttpServerOptions = {},
): Promise<GitHttpServer> {
  const expected = `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
  const authorizations: (string | undefined)[] = [];
  const requests: GitHttpServer['requests'] = [];
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    authorizations.push(req.headers.authorization);
    requests.push({
      address: req.socket.localAddress?.replace(/^::ffff:/, '') ?? '',
      authorization: req.headers.authorization,
    });
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_USER: 'x-access-token',
      },
    });
    req.pipe(cgi.stdin);
    const chunks: Buffer[] = [];
    cgi.stdout.on('data', (c: Buffer) => chunks.push(c));
    cgi.on('close', () => {
      const out = Buffer.concat(chunks);
      const split = out.indexOf('\r\n\r\n');
      const head = out.subarray(0, split).toString().split('\r\n');
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head) {
        const [name, ...rest] = line.split(':');
        if (name.toLowerCase() === 'status') status = parseInt(rest.join(':'), 10);
        else if (name) headers[name] = rest.join(':').trim();
      }
      res.writeHead(status, headers).end(out.subarray(split + 4));
    });
  };
  const server: Server | HttpsServer = options.tls
    ? createHttpsServer(options.tls, handle)
    : createServer(handle);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${port}`,
    authorizations,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
